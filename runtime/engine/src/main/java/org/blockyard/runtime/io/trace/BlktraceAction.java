package org.blockyard.runtime.io.trace;

/**
 * The block-layer events Blockyard traces, with the action code blktrace gives each
 * ({@code __BLK_TA_*} in blktrace_api.h) and the letter blkparse prints for it.
 */
public enum BlktraceAction {
    /** A bio is about to be queued ({@code __BLK_TA_QUEUE}). */
    QUEUE(1, 'Q', Category.QUEUE, false),
    /** A bio was merged onto the back of a queued request ({@code __BLK_TA_BACKMERGE}). */
    BACKMERGE(2, 'M', Category.QUEUE, false),
    /** A bio was merged onto the front of a queued request ({@code __BLK_TA_FRONTMERGE}). */
    FRONTMERGE(3, 'F', Category.QUEUE, false),
    /** A request was inserted into the scheduler ({@code __BLK_TA_INSERT}). */
    INSERT(12, 'I', Category.QUEUE, true),
    /** A request was issued to the driver ({@code __BLK_TA_ISSUE}). */
    ISSUE(7, 'D', Category.ISSUE, true),
    /** A request completed ({@code __BLK_TA_COMPLETE}). */
    COMPLETE(8, 'C', Category.COMPLETE, true);

    /** The {@code BLK_TC_*} category an action always carries. */
    enum Category {
        QUEUE(1 << 4), ISSUE(1 << 6), COMPLETE(1 << 7);

        final int bit;

        Category(int bit) {
            this.bit = bit;
        }
    }

    private final int code;
    private final char letter;
    private final Category category;
    private final boolean requestEvent;

    BlktraceAction(int code, char letter, Category category, boolean requestEvent) {
        this.code = code;
        this.letter = letter;
        this.category = category;
        this.requestEvent = requestEvent;
    }

    /** The low 16 bits of the action word ({@code __BLK_TA_*}). */
    public int code() {
        return code;
    }

    /** The action letter of blkparse's default output. */
    public char letter() {
        return letter;
    }

    int categoryBit() {
        return category.bit;
    }

    /**
     * True for events about a struct request (I, D, C) rather than a bio (Q, M, F); the kernel
     * marks those as file-system requests ({@code BLK_TC_FS}).
     */
    boolean requestEvent() {
        return requestEvent;
    }
}
