package org.blockyard.runtime.alloc;

import java.util.Arrays;

/**
 * The block bitmap of one block group: bit {@code b} is 1 when group-relative block {@code b} is used.
 *
 * <h2>Data</h2>
 * <ul>
 *   <li>{@code bits}: the bitmap proper, 64 blocks per {@code long}, bit {@code b} at
 *       {@code bits[b >>> 6]} bit {@code b & 63}. The size is a positive multiple of 64, so there are
 *       no padding bits.</li>
 *   <li>Two summary trees over the words. In {@code hasFree[0]} bit {@code w} is set iff bitmap word
 *       {@code w} has a free bit (is not all ones); in {@code hasUsed[0]} iff it has a used bit (is not
 *       zero). Level {@code k + 1} summarises level {@code k} the same way (bit set iff that summary word
 *       is non-zero), up to a top level of exactly one word. A 32768-block group has levels of 8 and 1
 *       words; a 1,048,576-block group has 256, 4 and 1.</li>
 *   <li>{@code usedCount}, kept on every change.</li>
 * </ul>
 *
 * <h2>Invariants</h2>
 * Every summary bit is exactly "the word below is non-zero" (after inverting the bitmap word for the
 * free tree); bits of a summary word past the last word they could describe are 0.
 * {@code usedCount} equals the population count of {@code bits}. {@link #checkConsistency()} verifies
 * all of this.
 *
 * <h2>Operations</h2>
 * <pre>
 *   isUsed                      O(1)
 *   nextFree / nextUsed         at most 2 * (levels + 1) words, whatever the distance skipped
 *   nextFreeSliced              the same search, stopped after a word budget with a resume point
 *   freeRunLength, firstXxxIn   one nextUsed / nextFree
 *   claimRun, setUsed, setFree  one word write per 64 blocks, plus summary bits that change
 *   nextAlignedFree             per candidate: one nextFree, one nextUsed (never a step per alignment unit)
 *   forEachFreeRun              one nextFree + one nextUsed per run
 * </pre>
 * Searches climb the summary tree from the starting word until a summary word shows a non-empty word
 * further on, then descend taking the lowest set bit at each level: a stretch of full (or empty) words
 * of any length costs one word per level, which is what ext4_mb_scan_aligned's one-stripe-at-a-time loop
 * did not have (328,215,171 loop iterations against 25,055 with find_next_zero_bit, seed 001).
 *
 * <h2>Concurrency</h2>
 * None: a bitmap is owned by one group actor and touched only from its message handler.
 *
 * <h2>Errors</h2>
 * Positions outside the group, negative counts and empty budgets throw {@link IllegalArgumentException};
 * a request that contradicts the current bits (freeing a free block, claiming a used one) throws
 * {@link IllegalStateException} naming the first offending block. In both cases nothing has changed.
 */
public final class Bitmap {

    /** Result of a search that found nothing in its range. */
    public static final int NOT_FOUND = -1;

    /** Consumer of free runs; return false to stop the walk. */
    @FunctionalInterface
    public interface RunConsumer {
        boolean accept(int start, int length);
    }

    private final int sizeBits;
    /**
     * The words. A {@link #sharingCopy} shares its template's until its first change, when it takes its own
     * copy, so a volume's unchanged groups (most of a new 8 TiB volume's 65,536) cost no 4 KiB each. Only
     * {@link #writeWord} writes.
     */
    private long[] bits;
    private boolean ownBits = true;
    /** hasFree[k][i] bit j: the word at index 64*i+j one level down has a free bit (see class comment). */
    private final long[][] hasFree;
    /** hasUsed[k][i] bit j: the word at index 64*i+j one level down has a used bit. */
    private final long[][] hasUsed;
    private int usedCount;
    private long wordsExamined;

    /**
     * An all-free bitmap of {@code sizeBits} blocks.
     *
     * @param sizeBits blocks in the group; must be a positive multiple of 64 (ext2/3 groups are
     *                 multiples of 8 x block size, 32768 by default)
     */
    public Bitmap(int sizeBits) {
        if (sizeBits <= 0 || (sizeBits & 63) != 0) {
            throw new IllegalArgumentException(
                    "bitmap size must be a positive multiple of 64 bits, got " + sizeBits);
        }
        this.sizeBits = sizeBits;
        this.bits = new long[sizeBits >>> 6];
        int levels = 0;
        for (int n = bits.length; n > 1; n = (n + 63) >>> 6) {
            levels++;
        }
        this.hasFree = new long[levels][];
        this.hasUsed = new long[levels][];
        int n = bits.length;
        for (int k = 0; k < levels; k++) {
            n = (n + 63) >>> 6;
            hasFree[k] = new long[n];
            hasUsed[k] = new long[n];
        }
        for (int w = 0; w < bits.length; w++) {
            mark(hasFree, w, true);
        }
    }

    /** A copy of {@code other}; with {@code share}, sharing its words until the copy's first change. */
    private Bitmap(Bitmap other, boolean share) {
        this.sizeBits = other.sizeBits;
        this.ownBits = other.ownBits && !share;
        this.bits = ownBits ? other.bits.clone() : other.bits;
        this.hasFree = deepClone(other.hasFree);
        this.hasUsed = deepClone(other.hasUsed);
        this.usedCount = other.usedCount;
        this.wordsExamined = 0;
    }

    /**
     * A bitmap holding exactly the given words (bit {@code b} in {@code words[b >>> 6]}, bit {@code b & 63}),
     * for loading a group's on-disk bitmap. The array is copied.
     */
    public static Bitmap fromWords(long[] words) {
        if (words == null || words.length == 0 || words.length > (Integer.MAX_VALUE >>> 6)) {
            throw new IllegalArgumentException("need between 1 and " + (Integer.MAX_VALUE >>> 6)
                    + " words, got " + (words == null ? "null" : String.valueOf(words.length)));
        }
        Bitmap b = new Bitmap(words.length << 6);
        for (int w = 0; w < words.length; w++) {
            b.writeWord(w, words[w]);
        }
        return b;
    }

    /** A copy of the bitmap words, in the layout {@link #fromWords(long[])} accepts. */
    public long[] toWords() {
        return bits.clone();
    }

    // ---------------------------------------------------------------- counters and single bits

    public int size() {
        return sizeBits;
    }

    public int freeCount() {
        return sizeBits - usedCount;
    }

    public int usedCount() {
        return usedCount;
    }

    /** Words (bitmap and summary) read by searches since this bitmap was created or copied. */
    public long wordsExamined() {
        return wordsExamined;
    }

    public boolean isUsed(int bit) {
        checkBit(bit);
        return (bits[bit >>> 6] & (1L << bit)) != 0;
    }

    // ---------------------------------------------------------------- searches

    /** First free block in {@code [from, toExclusive)}, or {@link #NOT_FOUND}. */
    public int nextFree(int from, int toExclusive) {
        checkRange(from, toExclusive);
        return scan(true, from, toExclusive, Long.MAX_VALUE);
    }

    /** First used block in {@code [from, toExclusive)}, or {@link #NOT_FOUND}. */
    public int nextUsed(int from, int toExclusive) {
        checkRange(from, toExclusive);
        return scan(false, from, toExclusive, Long.MAX_VALUE);
    }

    /**
     * {@link #nextFree} reading at most {@code maxWords} words (bitmap and summary words alike), so a
     * group actor can bound the work done per message.
     *
     * @return the free block; {@link #NOT_FOUND} when the range has none; or, when the budget ran out
     *         first, a value for which {@link #exhausted(int)} is true and {@link #resumeAt(int)} gives a
     *         position {@code p} with {@code from < p < toExclusive} and no free block in {@code [from, p)}.
     *         Calling again from {@code p} therefore finds what {@code nextFree(from, toExclusive)} finds,
     *         and every call with a budget of at least one word makes progress.
     */
    public int nextFreeSliced(int from, int toExclusive, int maxWords) {
        checkRange(from, toExclusive);
        if (maxWords < 1) {
            throw new IllegalArgumentException("word budget must be at least 1, got " + maxWords);
        }
        return scan(true, from, toExclusive, maxWords);
    }

    /** True when a {@link #nextFreeSliced} result means "budget ran out; resume at {@link #resumeAt}". */
    public static boolean exhausted(int result) {
        return result <= -2;
    }

    /** The resume position encoded in an {@link #exhausted} result of {@link #nextFreeSliced}. */
    public static int resumeAt(int result) {
        if (!exhausted(result)) {
            throw new IllegalArgumentException("not an exhausted search result: " + result);
        }
        return -(result + 2);
    }

    /**
     * Number of consecutive free blocks starting at {@code from}, at most {@code max}; 0 when {@code from}
     * is used or equals {@link #size()}.
     */
    public int freeRunLength(int from, int max) {
        if (from < 0 || from > sizeBits) {
            throw new IllegalArgumentException("position " + from + " outside [0, " + sizeBits + "]");
        }
        if (max < 0) {
            throw new IllegalArgumentException("negative maximum run length " + max);
        }
        int to = (int) Math.min(sizeBits, (long) from + max);
        int used = scan(false, from, to, Long.MAX_VALUE);
        return (used == NOT_FOUND ? to : used) - from;
    }

    /** First used block in {@code [from, from + count)}, or {@link #NOT_FOUND}. */
    public int firstUsedIn(int from, int count) {
        checkCount(from, count);
        return scan(false, from, from + count, Long.MAX_VALUE);
    }

    /** First free block in {@code [from, from + count)}, or {@link #NOT_FOUND}. */
    public int firstFreeIn(int from, int count) {
        checkCount(from, count);
        return scan(true, from, from + count, Long.MAX_VALUE);
    }

    /**
     * First position {@code p >= from} with {@code (p + alignOffset) % alignment == 0} such that
     * {@code [p, p + runLength)} is free and inside {@code [from, toExclusive)}, or {@link #NOT_FOUND}.
     * <p>
     * The search jumps to the next free block and rounds up to the alignment; when the run starting
     * there is broken by a used block {@code u}, no aligned start in {@code [p, u]} can succeed, so it
     * resumes with the next free block after {@code u}. It never steps one alignment unit at a time.
     *
     * @param alignOffset added to a group-relative position before the alignment test, so a caller can
     *                    align on absolute block numbers (pass the group's first block, or any value
     *                    congruent to it modulo {@code alignment})
     */
    public int nextAlignedFree(int from, int toExclusive, int alignment, int alignOffset, int runLength) {
        checkRange(from, toExclusive);
        if (alignment < 1) {
            throw new IllegalArgumentException("alignment must be at least 1, got " + alignment);
        }
        if (runLength < 1) {
            throw new IllegalArgumentException("run length must be at least 1, got " + runLength);
        }
        long off = Math.floorMod(alignOffset, alignment);
        int p = from;
        while (p < toExclusive) {
            int free = scan(true, p, toExclusive, Long.MAX_VALUE);
            if (free == NOT_FOUND) {
                return NOT_FOUND;
            }
            long start = roundUpAligned(free, alignment, off);
            long end = start + runLength;
            if (end > toExclusive) {
                return NOT_FOUND;
            }
            int used = scan(false, (int) start, (int) end, Long.MAX_VALUE);
            if (used == NOT_FOUND) {
                return (int) start;
            }
            p = used + 1;
        }
        return NOT_FOUND;
    }

    /** Smallest {@code a >= p} with {@code (a + off) % alignment == 0}, for {@code 0 <= off < alignment}. */
    private static long roundUpAligned(long p, int alignment, long off) {
        long rem = Math.floorMod(p + off, (long) alignment);
        return rem == 0 ? p : p + (alignment - rem);
    }

    /**
     * Calls {@code consumer} with every maximal free run in {@code [from, toExclusive)}, clipped to the
     * range, in increasing order, until it returns false.
     */
    public void forEachFreeRun(int from, int toExclusive, RunConsumer consumer) {
        checkRange(from, toExclusive);
        if (consumer == null) {
            throw new IllegalArgumentException("consumer is null");
        }
        int p = from;
        while (p < toExclusive) {
            int start = scan(true, p, toExclusive, Long.MAX_VALUE);
            if (start == NOT_FOUND) {
                return;
            }
            int end = scan(false, start, toExclusive, Long.MAX_VALUE);
            if (end == NOT_FOUND) {
                end = toExclusive;
            }
            if (!consumer.accept(start, end - start)) {
                return;
            }
            p = end;
        }
    }

    // ---------------------------------------------------------------- changes

    /**
     * Claims the free run starting at {@code from}: marks consecutive free blocks used until a used block,
     * {@code maxCount} blocks or the end of the group, whichever comes first (ext3_try_to_allocate's
     * multi-block claim: it never skips a hole).
     *
     * @return blocks claimed, at least 1
     * @throws IllegalStateException if {@code from} is used
     */
    public int claimRun(int from, int maxCount) {
        checkBit(from);
        if (maxCount < 1) {
            throw new IllegalArgumentException("claim of " + maxCount + " blocks; need at least 1");
        }
        if (isUsed(from)) {
            throw new IllegalStateException("cannot claim a run at block " + from + ": it is already used");
        }
        int n = freeRunLength(from, maxCount);
        fill(from, n, true);
        return n;
    }

    /**
     * Marks {@code [from, from + count)} used (system zones, exact claims).
     *
     * @throws IllegalStateException naming the first block of the range that is already used; then nothing
     *                               has changed
     */
    public void setUsed(int from, int count) {
        checkCount(from, count);
        int used = scan(false, from, from + count, Long.MAX_VALUE);
        if (used != NOT_FOUND) {
            throw new IllegalStateException("cannot mark [" + from + ", " + (from + count)
                    + ") used: block " + used + " is already used");
        }
        fill(from, count, true);
    }

    /**
     * Marks {@code [from, from + count)} free.
     *
     * @throws IllegalStateException naming the first block of the range that is already free; then nothing
     *                               has changed
     */
    public void setFree(int from, int count) {
        checkCount(from, count);
        int free = scan(true, from, from + count, Long.MAX_VALUE);
        if (free != NOT_FOUND) {
            throw new IllegalStateException("cannot free [" + from + ", " + (from + count)
                    + "): block " + free + " is already free");
        }
        fill(from, count, false);
    }

    // ---------------------------------------------------------------- checks

    public Bitmap copy() {
        return new Bitmap(this, false);
    }

    /**
     * A copy that shares this bitmap's words until its own first change. This bitmap must never change
     * again: it is a template, such as {@link BlockGroup}'s initial bitmap of a group shape.
     */
    Bitmap sharingCopy() {
        return new Bitmap(this, true);
    }

    /** True when {@code other} has the same size and the same used blocks. */
    public boolean sameBits(Bitmap other) {
        return other != null && other.sizeBits == sizeBits && Arrays.equals(other.bits, bits);
    }

    /**
     * Verifies the summary trees and the used counter against the bitmap words.
     *
     * @throws IllegalStateException describing the first inconsistency
     */
    public void checkConsistency() {
        int used = 0;
        for (long w : bits) {
            used += Long.bitCount(w);
        }
        if (used != usedCount) {
            throw new IllegalStateException("used counter " + usedCount + " but " + used + " bits set");
        }
        checkTree(hasFree, true);
        checkTree(hasUsed, false);
    }

    private void checkTree(long[][] tree, boolean free) {
        String name = free ? "free" : "used";
        for (int k = 0; k < tree.length; k++) {
            int below = k == 0 ? bits.length : tree[k - 1].length;
            for (int i = 0; i < tree[k].length; i++) {
                for (int j = 0; j < 64; j++) {
                    int child = (i << 6) + j;
                    boolean expected = child < below && word(free, k - 1, child) != 0;
                    boolean actual = (tree[k][i] & (1L << j)) != 0;
                    if (expected != actual) {
                        throw new IllegalStateException(name + " summary level " + k + " bit " + child
                                + " is " + actual + ", expected " + expected);
                    }
                }
            }
        }
    }

    @Override
    public String toString() {
        return "Bitmap[size=" + sizeBits + ", used=" + usedCount + ", free=" + freeCount() + "]";
    }

    // ---------------------------------------------------------------- internals

    /**
     * The word at {@code index} of {@code level} in the tree for {@code free} (level -1 is the bitmap,
     * inverted for the free tree), so that in every level a set bit means "has what we look for".
     */
    private long word(boolean free, int level, int index) {
        if (level < 0) {
            return free ? ~bits[index] : bits[index];
        }
        return (free ? hasFree : hasUsed)[level][index];
    }

    /**
     * First free ({@code free}) or used block in {@code [from, to)} reading at most {@code budget} words.
     * Returns the block, {@link #NOT_FOUND}, or {@code -(resume + 2)} when the budget ran out.
     * <p>
     * Positions at level {@code L} (-1 = bitmap) cover {@code 64^(L+1)} blocks. Invariant: no target in
     * {@code [from, known)}. Climb while the current word, masked from the current position, is zero;
     * then descend along lowest set bits.
     */
    private int scan(boolean free, int from, int to, long budget) {
        if (from >= to) {
            return NOT_FOUND;
        }
        int top = hasFree.length - 1;
        long known = from;
        int level = -1;
        long pos = from;
        while (true) {
            if (budget == 0) {
                return encodeResume(known);
            }
            budget--;
            wordsExamined++;
            int index = (int) (pos >>> 6);
            long w = word(free, level, index) & (-1L << (pos & 63));
            if (w != 0) {
                pos = ((long) index << 6) + Long.numberOfTrailingZeros(w);
                break;
            }
            known = (index + 1L) << (6 * (level + 2));
            if (known >= to || level == top) {
                return NOT_FOUND;
            }
            level++;
            pos = index + 1L;
        }
        while (true) {
            long start = pos << (6 * (level + 1));
            if (start >= to) {
                return NOT_FOUND;
            }
            known = start;
            if (level < 0) {
                return (int) pos;
            }
            if (budget == 0) {
                return encodeResume(known);
            }
            budget--;
            wordsExamined++;
            long w = word(free, level - 1, (int) pos);
            pos = (pos << 6) + Long.numberOfTrailingZeros(w);
            level--;
        }
    }

    private static int encodeResume(long known) {
        return (int) -(known + 2);
    }

    /** Sets ({@code used}) or clears {@code [from, from + count)} without checking the old values. */
    private void fill(int from, int count, boolean used) {
        if (count == 0) {
            return;
        }
        int end = from + count; // exclusive, <= sizeBits
        int first = from >>> 6;
        int last = (end - 1) >>> 6;
        for (int w = first; w <= last; w++) {
            long mask = -1L;
            if (w == first) {
                mask &= -1L << from;
            }
            if (w == last) {
                mask &= -1L >>> (64 - (end - (last << 6)));
            }
            writeWord(w, used ? bits[w] | mask : bits[w] & ~mask);
        }
    }

    private void writeWord(int index, long value) {
        long old = bits[index];
        if (old == value) {
            return;
        }
        if (!ownBits) {
            bits = bits.clone();
            ownBits = true;
        }
        bits[index] = value;
        usedCount += Long.bitCount(value) - Long.bitCount(old);
        if ((old != -1L) != (value != -1L)) {
            mark(hasFree, index, value != -1L);
        }
        if ((old != 0) != (value != 0)) {
            mark(hasUsed, index, value != 0);
        }
    }

    /** Sets or clears summary bit {@code child} of level 0, carrying the change up while a word's zeroness changes. */
    private static void mark(long[][] tree, int child, boolean set) {
        for (long[] level : tree) {
            int i = child >>> 6;
            long old = level[i];
            long value = set ? old | (1L << child) : old & ~(1L << child);
            level[i] = value;
            if ((old != 0) == (value != 0)) {
                return;
            }
            child = i;
        }
    }

    private static long[][] deepClone(long[][] tree) {
        long[][] c = new long[tree.length][];
        for (int k = 0; k < tree.length; k++) {
            c[k] = tree[k].clone();
        }
        return c;
    }

    private void checkBit(int bit) {
        if (bit < 0 || bit >= sizeBits) {
            throw new IllegalArgumentException("block " + bit + " outside the group [0, " + sizeBits + ")");
        }
    }

    private void checkRange(int from, int toExclusive) {
        if (from < 0 || toExclusive > sizeBits || from > toExclusive) {
            throw new IllegalArgumentException("range [" + from + ", " + toExclusive
                    + ") is not inside the group [0, " + sizeBits + ")");
        }
    }

    private void checkCount(int from, int count) {
        if (count < 0) {
            throw new IllegalArgumentException("negative block count " + count);
        }
        if (from < 0 || (long) from + count > sizeBits) {
            throw new IllegalArgumentException("range of " + count + " blocks at " + from
                    + " is not inside the group [0, " + sizeBits + ")");
        }
    }
}
