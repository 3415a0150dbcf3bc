package org.blockyard.nbd;

/** A request refused or failed with an NBD error ({@link Nbd#EINVAL}, {@link Nbd#ENOSPC}, ...), and why. */
final class NbdError extends RuntimeException {
    final int errno;

    NbdError(int errno, String message) {
        super(message, null, false, false);
        this.errno = errno;
    }
}
