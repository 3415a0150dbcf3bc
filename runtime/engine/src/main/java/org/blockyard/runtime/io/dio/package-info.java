/**
 * Direct (raw) I/O split into a sector-granular head, page-sized middle pieces and a
 * sector-granular tail, as the 2.4 multi-block raw I/O patch did (seed 003), for the queue to
 * merge back up to its request size limit.
 */
package org.blockyard.runtime.io.dio;
