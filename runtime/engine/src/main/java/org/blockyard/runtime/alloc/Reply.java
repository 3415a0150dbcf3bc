package org.blockyard.runtime.alloc;

import org.blockyard.api.alloc.AllocationException;

/**
 * The answer to an allocator message: a value, or the typed reason it was refused (and nothing changed).
 */
public record Reply<T>(T value, AllocationException error) {
    public static <T> Reply<T> ok(T value) {
        return new Reply<>(value, null);
    }

    public static <T> Reply<T> fail(AllocationException error) {
        return new Reply<>(null, error);
    }

    public boolean isOk() {
        return error == null;
    }

    /** The value, or the error thrown. */
    public T get() {
        if (error != null) throw error;
        return value;
    }
}
