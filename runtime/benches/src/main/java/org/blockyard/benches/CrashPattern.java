package org.blockyard.benches;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;

/**
 * The contents {@code bench crash} writes into a data file's block, and the check of what a block holds: each
 * block is a function of the file's name, the logical block and the write generation that wrote it, so a
 * block read back says which write it comes from, or that it comes from none ({@link #FOREIGN}: another
 * file's or another block's bytes, such as a freed block's old data shown through a lost unwritten flag;
 * {@link #TORN}: a header that matches and a body that does not; {@link #GARBAGE}: anything else).
 *
 * <p>Layout of a block: magic (int), generation (int), logical block (long), hash of the name (long), then
 * bytes from a generator seeded by all three. Generation 0 is never written: it stands for zeros, what a
 * hole or an unwritten block reads as.
 */
final class CrashPattern {
    private CrashPattern() {}

    static final int MAGIC = 0x43524153; // "CRAS"
    static final int HEADER_BYTES = 24;
    /** Not a pattern of this file and block: another file's, another block's. */
    static final int FOREIGN = -1;
    /** The header of this file, block and a generation, with a body that is not that generation's. */
    static final int TORN = -2;
    /** Neither zeros nor any pattern. */
    static final int GARBAGE = -3;

    static long nameHash(String file) {
        long h = 0xcbf29ce484222325L;
        for (byte b : file.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x100000001b3L;
        }
        return h;
    }

    private static long seed(long nameHash, long logical, int generation) {
        long z = nameHash ^ (logical * 0x9E3779B97F4A7C15L) ^ ((long) generation << 32 | generation);
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Fills {@code blockBytes} of {@code out} from its position with the block's pattern (position advanced). */
    static void fill(ByteBuffer out, int blockBytes, String file, long logical, int generation) {
        if (generation <= 0) throw new IllegalArgumentException("generation " + generation);
        long hash = nameHash(file);
        int start = out.position();
        out.putInt(MAGIC).putInt(generation).putLong(logical).putLong(hash);
        SplittableRandom r = new SplittableRandom(seed(hash, logical, generation));
        while (out.position() - start + 8 <= blockBytes) out.putLong(r.nextLong());
        while (out.position() - start < blockBytes) out.put((byte) r.nextInt());
    }

    /**
     * What the block at {@code [offset, offset + blockBytes)} of {@code data} holds for logical block
     * {@code logical} of {@code file}: 0 for zeros, the generation of a whole pattern, else {@link #FOREIGN},
     * {@link #TORN} or {@link #GARBAGE}.
     */
    static int generation(ByteBuffer data, int offset, int blockBytes, String file, long logical) {
        boolean zero = true;
        for (int i = 0; i < blockBytes && zero; i += 8) zero = data.getLong(offset + i) == 0;
        if (zero) return 0;
        if (data.getInt(offset) != MAGIC) return GARBAGE;
        int generation = data.getInt(offset + 4);
        if (data.getLong(offset + 8) != logical || data.getLong(offset + 16) != nameHash(file) || generation <= 0)
            return FOREIGN;
        ByteBuffer want = ByteBuffer.allocate(blockBytes);
        fill(want, blockBytes, file, logical, generation);
        return want.flip().equals(data.slice(offset, blockBytes)) ? generation : TORN;
    }

    /** A word for what {@link #generation} answered. */
    static String describe(int generation) {
        return switch (generation) {
            case 0 -> "zeros";
            case FOREIGN -> "another file's or block's data";
            case TORN -> "a torn block";
            case GARBAGE -> "bytes of no write";
            default -> "generation " + generation;
        };
    }
}
