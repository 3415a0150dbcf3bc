/** {@code blockyard bench merge | dio | streaming | metadata}: block-I/O load tests that print a table and write JSON. */
package org.blockyard.benches.io;
