package org.blockyard.api.io;

/** What a request does. A FLUSH carries no data (0 sectors) and orders everything around it. */
public enum IoOp {
    READ, WRITE, FLUSH
}
