/** {@code blockyard bench merge | dio | streaming | metadata | randomreads}: block-I/O load tests that print a table and write JSON. */
package org.blockyard.benches.io;
