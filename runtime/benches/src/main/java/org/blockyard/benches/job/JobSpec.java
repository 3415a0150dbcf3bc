package org.blockyard.benches.job;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.blockyard.api.io.IoFlag;

/**
 * One job of a workload, every key resolved (the job's own value, else the file's {@code global} one, else the
 * default); docs/jobs.md says what each means. Sizes are bytes, times nanoseconds.
 *
 * @param sizeBytes   queue: the region and the bytes each clone moves; files: bytes per file; extents: bytes each
 *                    clone allocates; null when the job is bounded by {@code runtimeNanos} alone
 * @param runtimeNanos 0 for none
 * @param truncateToBytes files: what a file keeps when it is done (its blocks beyond are released); null: all
 * @param given           the keys the job was made of, each as written and where (the job's own, global's or an
 *                        option), for the messages of checks made later
 */
record JobSpec(String name, Engine engine, Rw rw, int rwmixread, SizeMix bs, Long sizeBytes, long offsetBytes,
               long offsetIncrementBytes, long runtimeNanos, boolean timeBased, long rampNanos, int iodepth, int numjobs,
               long thinkNanos, Set<IoFlag> flags, int nrfiles, Long truncateToBytes, long unitBytes, long maxExtentBytes,
               double fillHigh, double fillLow, Map<String, Workload.Val> given) {

    /** Through which interface a job's calls go (fio's ioengine picks the API its I/O goes through). */
    enum Engine {
        /** {@code BlockQueue} submissions: {@code QueueActor.Submit} messages to the queue of the device. */
        QUEUE,
        /** The allocator's files: {@code FileShard.Open}, {@code FileActor.GetBlocks} appends, {@code Truncate}, {@code Close}. */
        FILES,
        /** The allocator's extents: {@code allocate} and {@code release}, BlueStore style. */
        EXTENTS;

        String id() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    /** fio's rw: the direction, and whether offsets follow each other or are drawn at random. */
    enum Rw {
        READ("read", true, false, false), WRITE("write", false, true, false),
        RANDREAD("randread", true, false, true), RANDWRITE("randwrite", false, true, true),
        READWRITE("readwrite", true, true, false), RANDRW("randrw", true, true, true);

        final String id;
        final boolean reads, writes, random;

        Rw(String id, boolean reads, boolean writes, boolean random) {
            this.id = id;
            this.reads = reads;
            this.writes = writes;
            this.random = random;
        }

        /** The names fio takes, {@code rw} being its other name for {@code readwrite}. */
        static final List<String> NAMES = List.of("read", "write", "randread", "randwrite", "readwrite", "rw", "randrw");

        static Rw of(String name) {
            if (name.equals("rw")) return READWRITE;
            for (Rw r : values()) if (r.id.equals(name)) return r;
            throw new IllegalArgumentException(name);
        }

        boolean mixed() {
            return reads && writes;
        }
    }

    /** Bytes a clone is to move (queue), map (files) or allocate (extents); Long.MAX_VALUE when only time bounds it. */
    long bytesPerClone() {
        if (timeBased || sizeBytes == null) return Long.MAX_VALUE;
        return engine == Engine.FILES ? sizeBytes * nrfiles : sizeBytes;
    }

    /** The job as docs/jobs.md names its keys, for the JSON's parameters. */
    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("name", name);
        m.put("ioengine", engine.id());
        if (engine == Engine.QUEUE) {
            m.put("rw", rw.id);
            if (rw.mixed()) m.put("rwmixread", rwmixread);
        }
        m.put("bs", bs.toString());
        m.put("size", sizeBytes);
        if (engine == Engine.QUEUE) {
            m.put("offset", offsetBytes);
            m.put("offset_increment", offsetIncrementBytes);
        }
        m.put("runtime_s", runtimeNanos / 1e9);
        m.put("time_based", timeBased);
        m.put("ramp_time_s", rampNanos / 1e9);
        m.put("iodepth", iodepth);
        m.put("numjobs", numjobs);
        m.put("thinktime_us", thinkNanos / 1e3);
        if (engine == Engine.QUEUE) m.put("flags", flags.stream().map(f -> f.name().toLowerCase(java.util.Locale.ROOT)).toList());
        if (engine == Engine.FILES) {
            m.put("nrfiles", nrfiles);
            m.put("truncate_to", truncateToBytes);
        }
        if (engine == Engine.EXTENTS) {
            m.put("unit", unitBytes);
            m.put("max_extent", maxExtentBytes);
            m.put("fill_high", fillHigh);
            m.put("fill_low", fillLow);
        }
        return m;
    }
}
