package org.blockyard.benches.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.blockyard.benches.Sizes;

/**
 * The sizes a job's requests take, in fio's three spellings: {@code bs} (one size), {@code bssplit} (sizes
 * with their shares in percent, {@code 4k/50:64k/30:1m/20}; a size without a share takes what the others
 * leave) and {@code bsrange} ({@code 4k-2m}: uniform over the multiples of the low end up to the high end).
 * Draws are from the job's own seeded random, so a run repeats.
 */
final class SizeMix {
    private final long[] bytes;        // ascending for a split, {low, high} for a range
    private final int[] cumulative;    // a split's shares summed; null otherwise
    private final boolean range;
    private final String text;

    private SizeMix(long[] bytes, int[] cumulative, boolean range, String text) {
        this.bytes = bytes;
        this.cumulative = cumulative;
        this.range = range;
        this.text = text;
    }

    /** The key it was given as: bs, bssplit or bsrange. */
    String key() {
        return range ? "bsrange" : cumulative != null ? "bssplit" : "bs";
    }

    static SizeMix single(long bytes) {
        return new SizeMix(new long[] {bytes}, null, false, Sizes.format(bytes).replace(" ", ""));
    }

    /** fio's bssplit; the message of the exception says what is wrong. */
    static SizeMix split(String text) {
        List<long[]> parts = new ArrayList<>();
        int given = 0, open = 0;
        for (String part : text.split(":")) {
            String[] sp = part.trim().split("/", -1);
            if (sp.length > 2 || sp[0].isBlank())
                throw new IllegalArgumentException("'" + part + "' is not SIZE/PERCENT");
            long size = Sizes.parse(sp[0]);
            int pct = -1;
            if (sp.length == 2 && !sp[1].isBlank()) {
                try {
                    pct = Integer.parseInt(sp[1].trim());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("share '" + sp[1] + "' is not a whole percent");
                }
                if (pct < 0 || pct > 100) throw new IllegalArgumentException("share " + pct + " is not 0 to 100");
                given += pct;
            } else {
                open++;
            }
            parts.add(new long[] {size, pct});
        }
        if (given > 100 || open == 0 && given != 100)
            throw new IllegalArgumentException("the shares add up to " + given + ", not 100");
        int rest = 100 - given;
        long[] sizes = new long[parts.size()];
        int[] cum = new int[parts.size()];
        int sum = 0, openSeen = 0;
        for (int i = 0; i < parts.size(); i++) {
            long[] p = parts.get(i);
            int share = p[1] >= 0 ? (int) p[1] : rest / open + (openSeen++ < rest % open ? 1 : 0);
            sum += share;
            sizes[i] = p[0];
            cum[i] = sum;
        }
        return new SizeMix(sizes, cum, false, text.trim());
    }

    /** fio's bsrange: {@code LOW-HIGH}. */
    static SizeMix range(String text) {
        String[] lh = text.split("-");
        if (lh.length != 2) throw new IllegalArgumentException("not LOW-HIGH");
        long low = Sizes.parse(lh[0]), high = Sizes.parse(lh[1]);
        if (low < 1 || high < low) throw new IllegalArgumentException("needs 1 <= LOW <= HIGH");
        return new SizeMix(new long[] {low, high}, null, true, text.trim());
    }

    /** The next request's size in bytes. */
    long next(Random rnd) {
        if (range) return bytes[0] * (1 + (long) (rnd.nextDouble() * (bytes[1] / bytes[0])));
        if (cumulative == null) return bytes[0];
        int r = rnd.nextInt(100);
        for (int i = 0; i < bytes.length; i++) if (r < cumulative[i]) return bytes[i];
        return bytes[bytes.length - 1];
    }

    /** Every size a draw can give (a range: its two ends), to check against the device's rules. */
    long[] sizes() {
        return bytes.clone();
    }

    /** Whether every size a draw can give is a multiple of {@code unit}. */
    boolean multiplesOf(long unit) {
        for (long b : bytes) if (b % unit != 0) return false;
        return true;
    }

    long min() {
        long m = Long.MAX_VALUE;
        for (long b : bytes) m = Math.min(m, b);
        return m;
    }

    long max() {
        long m = 0;
        for (long b : bytes) m = Math.max(m, b);
        return range ? bytes[0] * (bytes[1] / bytes[0]) : m;
    }

    @Override
    public String toString() {
        return text;
    }
}
