package org.blockyard.benches.job;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigObject;
import com.typesafe.config.ConfigParseOptions;
import com.typesafe.config.ConfigValue;
import com.typesafe.config.ConfigValueType;

import org.blockyard.api.io.IoFlag;
import org.blockyard.benches.BadOption;
import org.blockyard.benches.Sizes;
import org.blockyard.benches.job.JobSpec.Engine;
import org.blockyard.benches.job.JobSpec.Rw;

/**
 * A workload: the run's own settings and its jobs, read from a job file (HOCON: a {@code global} object and a
 * {@code jobs} list, docs/jobs.md) and from {@code --KEY=VALUE} options. A job's own key wins over
 * {@code global}; an option wins over both: it replaces the key in {@code global} and in every job that sets
 * it (without a file the options are the one job's own keys). Every key is checked here, and a key no one
 * knows is an error, not a silent default; an option is checked on its own too, whether or not a job uses it.
 * Each problem is a {@link BadOption} naming where the key stands ({@code mix.conf:12: randread.bs}, or
 * {@code --bs}), its value as written there and what is allowed.
 *
 * @param device          sim, mem or file
 * @param filename        the file device's image (or a block device, read only); null: the configured one
 * @param deviceSizeBytes the mem or file device's size; null: the configured one
 * @param direct          ask the file device for O_DIRECT; null: as configured
 * @param allowOverwrite  write jobs may write into a filename that exists and is not empty
 * @param elevators       one run of every job per elevator, in this order; empty: the configured one
 * @param volumeBytes     the allocator's volume (files and extents jobs); null: sized to the jobs
 * @param prefill         the part of every group's data blocks taken from its start before the jobs begin, in [0, 1)
 * @param given           the run's keys as given (the file's {@code global} with the options over it), for messages
 */
record Workload(String source, String device, String filename, Long deviceSizeBytes, Boolean direct,
                boolean allowOverwrite, List<String> elevators, Long volumeBytes, double prefill, long seed,
                List<JobSpec> jobs, Map<String, Val> given) {

    static final List<String> GLOBAL_KEYS = List.of("device", "filename", "device_size", "direct", "allow_overwrite",
            "elevator", "volume_size", "prefill", "seed");
    static final List<String> JOB_KEYS = List.of("ioengine", "rw", "rwmixread", "bs", "bssplit", "bsrange", "size",
            "offset", "offset_increment", "runtime", "time_based", "ramp_time", "iodepth", "numjobs", "thinktime",
            "flags", "nrfiles", "truncate_to", "unit", "max_extent", "fill_high", "fill_low");
    private static final Map<String, Engine> ONLY_FOR = Map.ofEntries(
            Map.entry("rw", Engine.QUEUE), Map.entry("rwmixread", Engine.QUEUE), Map.entry("offset", Engine.QUEUE),
            Map.entry("offset_increment", Engine.QUEUE), Map.entry("flags", Engine.QUEUE),
            Map.entry("thinktime", Engine.QUEUE), Map.entry("nrfiles", Engine.FILES),
            Map.entry("truncate_to", Engine.FILES), Map.entry("unit", Engine.EXTENTS),
            Map.entry("max_extent", Engine.EXTENTS), Map.entry("fill_high", Engine.EXTENTS),
            Map.entry("fill_low", Engine.EXTENTS));
    static final List<String> DEVICES = List.of("sim", "mem", "file");
    static final List<String> ENGINES = List.of("queue", "files", "extents");
    static final int MAX_IODEPTH = 65536, MAX_NUMJOBS = 1024, MAX_NRFILES = 1_000_000;

    /** A key's value as written and where it stands ({@code mix.conf:12: randread.bs}, {@code --bs}), for messages. */
    record Val(String where, Object raw) {
        String text() {
            return raw instanceof List<?> l ? String.join(",", l.stream().map(String::valueOf).toList()) : String.valueOf(raw);
        }

        /** True when the value came from the command line. */
        boolean option() {
            return where.startsWith("--");
        }

        BadOption bad(String allowed) {
            return new BadOption(where, text(), allowed);
        }
    }

    /**
     * Reads {@code file} (may be null: the jobs come from the options alone) with {@code options} (key to value,
     * as given on the command line: {@code --bs=4k} is {@code bs -> 4k}) laid over its {@code global}.
     */
    static Workload read(Path file, Map<String, String> options) {
        Map<String, Val> given = new LinkedHashMap<>();
        options.forEach((k, v) -> given.put(k, new Val("--" + k, v)));
        return file == null ? read(null, null, null, given)
                : read(String.valueOf(file.getFileName()), file.toString(), parse(file), given);
    }

    /**
     * A job file shipped as a class-path resource (config/jobs in this module's jar: {@code randomreads.conf}),
     * with {@code options} (key to its value, labelled as the command line gave it) laid over its {@code global}.
     */
    static Workload shipped(String jobFile, Map<String, Val> options) {
        java.net.URL url = Workload.class.getResource("jobs/" + jobFile);
        if (url == null) throw new IllegalStateException("the shipped job file " + jobFile + " is not on the class path");
        Config c;
        try {
            c = ConfigFactory.parseURL(url, ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
        } catch (ConfigException e) {
            throw new IllegalStateException("the shipped job file " + jobFile + " does not parse", e);
        }
        return read(jobFile, "config/jobs/" + jobFile, c, options);
    }

    /**
     * @param name    the file's name in messages, or null without a file
     * @param source  where it comes from, for the JSON's parameters
     * @param options each key's value and the option it came from ({@code --bs}), each checked on its own
     */
    private static Workload read(String name, String source, Config c, Map<String, Val> options) {
        Map<String, Val> global = new LinkedHashMap<>();
        List<Map<String, Val>> jobs = new ArrayList<>();
        if (c != null) {
            for (Map.Entry<String, ConfigValue> e : c.root().entrySet()) {
                String key = e.getKey();
                if (!key.equals("global") && !key.equals("jobs"))
                    throw new BadOption(where(name, e.getValue(), key), text(e.getValue()),
                            "unknown key; a job file holds global { ... } and jobs = [ { name = ..., ... } ]");
            }
            if (c.hasPath("global")) global.putAll(section(name, "global", c.root().get("global"), true));
            if (!c.hasPath("jobs"))
                throw new BadOption(name, source, "has no jobs = [ { name = ..., ... } ] (docs/jobs.md)");
            ConfigValue list = c.root().get("jobs");
            if (list.valueType() != ConfigValueType.LIST)
                throw new BadOption(where(name, list, "jobs"), text(list), "must be a list of jobs: jobs = [ { name = ..., ... } ]");
            Set<String> names = new HashSet<>();
            for (ConfigValue j : c.getList("jobs")) {
                if (j.valueType() != ConfigValueType.OBJECT)
                    throw new BadOption(where(name, j, "jobs"), text(j), "each job is an object: { name = ..., rw = ..., ... }");
                ConfigValue n = ((ConfigObject) j).get("name");
                if (n == null || n.valueType() != ConfigValueType.STRING && n.valueType() != ConfigValueType.NUMBER)
                    throw new BadOption(where(name, j, "jobs"), "{...}", "every job needs a name = ...");
                String jobName = String.valueOf(n.unwrapped());
                if (!jobName.matches("[A-Za-z0-9_.-]{1,40}"))
                    throw new BadOption(where(name, n, "name"), jobName, "a job name is 1 to 40 letters, digits, '_', '.' or '-'");
                if (!names.add(jobName)) throw new BadOption(where(name, n, "name"), jobName, "two jobs have this name");
                Map<String, Val> keys = section(name, jobName, j, false);
                keys.put("name", new Val(where(name, n, "name"), jobName));
                jobs.add(keys);
            }
            if (jobs.isEmpty()) throw new BadOption(where(name, list, "jobs"), "[]", "needs at least one job");
        }
        // Options: each checked on its own first, so that a wrong one is an error even where no job would use it.
        Map<String, Val> jobOptions = new LinkedHashMap<>();
        for (Map.Entry<String, Val> o : options.entrySet()) {
            String key = o.getKey().replace('-', '_');
            Val v = o.getValue();
            if (!GLOBAL_KEYS.contains(key) && !JOB_KEYS.contains(key))
                throw v.bad("unknown option" + suggest(key, true));
            check(key, v);
            if (GLOBAL_KEYS.contains(key)) global.put(key, v);
            else jobOptions.put(key, v);
        }
        if (jobs.isEmpty()) {
            if (jobOptions.isEmpty())
                throw new BadOption("JOBFILE", "", "give a job file, or a job as options (--rw=randread --bs=4k --size=64MiB)");
            // Without a file the options are the job's own keys: one that does not fit the job is an error.
            Map<String, Val> one = new LinkedHashMap<>(jobOptions);
            Val rw = jobOptions.get("rw"), engine = jobOptions.get("ioengine");
            String jobName = engine != null && !engine.text().trim().equalsIgnoreCase("queue") ? engine.text().trim().toLowerCase(Locale.ROOT)
                    : rw != null ? rw.text().trim().toLowerCase(Locale.ROOT) : "read";
            one.put("name", new Val("--name", jobName));
            jobs.add(one);
            jobOptions.clear();
        }
        List<JobSpec> specs = new ArrayList<>();
        for (Map<String, Val> j : jobs) specs.add(job(j, global, jobOptions));
        return new Workload(c == null ? "options" : source,
                global.containsKey("device") ? oneOf(global.get("device"), DEVICES) : null,
                global.containsKey("filename") ? global.get("filename").text() : null,
                global.containsKey("device_size") ? sectors(global.get("device_size")) : null,
                global.containsKey("direct") ? bool(global.get("direct")) : null,
                global.containsKey("allow_overwrite") && bool(global.get("allow_overwrite")),
                global.containsKey("elevator") ? names(global.get("elevator")) : List.of(),
                global.containsKey("volume_size") ? size(global.get("volume_size"), 1) : null,
                global.containsKey("prefill") ? prefill(global.get("prefill")) : 0,
                global.containsKey("seed") ? whole(global.get("seed"), Long.MIN_VALUE, Long.MAX_VALUE) : 1,
                List.copyOf(specs), Map.copyOf(global));
    }

    /** An option's value checked as the key's values are, before any job is made of it. */
    private static void check(String key, Val v) {
        switch (key) {
            case "ioengine" -> oneOf(v, ENGINES);
            case "rw" -> oneOf(v, Rw.NAMES);
            case "rwmixread" -> whole(v, 0, 100);
            case "bs", "size", "unit", "volume_size" -> size(v, 1);
            case "bssplit" -> mix(v, true);
            case "bsrange" -> mix(v, false);
            case "offset", "offset_increment", "truncate_to", "max_extent" -> size(v, 0);
            case "runtime", "ramp_time" -> duration(v, 1_000_000_000L);
            case "thinktime" -> duration(v, 1_000L);
            case "time_based", "direct", "allow_overwrite" -> bool(v);
            case "iodepth" -> whole(v, 1, MAX_IODEPTH);
            case "numjobs" -> whole(v, 1, MAX_NUMJOBS);
            case "nrfiles" -> whole(v, 1, MAX_NRFILES);
            case "flags" -> flags(v);
            case "fill_high", "fill_low" -> fraction(v, 0, 1);
            case "prefill" -> prefill(v);
            case "device" -> oneOf(v, DEVICES);
            case "device_size" -> sectors(v);
            case "elevator" -> names(v);
            case "seed" -> whole(v, Long.MIN_VALUE, Long.MAX_VALUE);
            case "filename" -> {
                if (v.text().isBlank()) throw v.bad("must name a file");
            }
            default -> throw new IllegalStateException("no check for the key " + key);
        }
    }

    private static Config parse(Path file) {
        if (!Files.isRegularFile(file) || !Files.isReadable(file))
            throw new BadOption("JOBFILE", file, "no such readable file");
        try {
            return ConfigFactory.parseFile(file.toFile(), ConfigParseOptions.defaults().setAllowMissing(false)).resolve();
        } catch (ConfigException e) {
            String m = e.getMessage() == null ? e.toString() : e.getMessage();
            int nl = m.indexOf('\n');
            m = (nl < 0 ? m : m.substring(0, nl)).replace(file + ": ", "line ");
            throw new BadOption("JOBFILE", file, "not a valid HOCON file: " + m);
        }
    }

    /** The keys of {@code global} or of one job, each checked to be known there. */
    private static Map<String, Val> section(String file, String section, ConfigValue v, boolean global) {
        if (v.valueType() != ConfigValueType.OBJECT)
            throw new BadOption(where(file, v, section), text(v), "must be an object { key = value, ... }");
        Map<String, Val> out = new LinkedHashMap<>();
        for (Map.Entry<String, ConfigValue> e : ((ConfigObject) v).entrySet()) {
            String key = e.getKey();
            String label = where(file, e.getValue(), section + "." + key);
            if (!global && key.equals("name")) continue;
            if (!JOB_KEYS.contains(key) && !(global && GLOBAL_KEYS.contains(key))) {
                String allowed = GLOBAL_KEYS.contains(key) ? "a key of global, not of a job" : "unknown key" + suggest(key, global);
                throw new BadOption(label, text(e.getValue()), allowed);
            }
            ConfigValueType t = e.getValue().valueType();
            if (t == ConfigValueType.OBJECT || t == ConfigValueType.NULL || t == ConfigValueType.LIST && !key.equals("elevator") && !key.equals("flags"))
                throw new BadOption(label, text(e.getValue()), "must be a single value");
            Object raw = t == ConfigValueType.LIST
                    ? ((List<?>) e.getValue().unwrapped()).stream().map(String::valueOf).toList() : e.getValue().unwrapped();
            out.put(key, new Val(label, raw));
        }
        return out;
    }

    /** fio's other names for keys, and their keys here. */
    private static final Map<String, String> ALIASES = Map.of("blocksize", "bs", "readwrite", "rw",
            "blocksize_range", "bsrange", "ramp", "ramp_time", "think_time", "thinktime", "engine", "ioengine");

    /** What {@code key} was probably meant to be (fio's name for it, or a key one or two letters away), or the keys. */
    private static String suggest(String key, boolean global) {
        if (ALIASES.containsKey(key)) return "; here it is " + ALIASES.get(key);
        List<String> known = new ArrayList<>(JOB_KEYS);
        if (global) known.addAll(GLOBAL_KEYS);
        for (String k : known) if (distance(key, k) <= 2) return "; did you mean " + k + "? (docs/jobs.md)";
        return "; " + (global ? "allowed are " : "job keys are ") + String.join(", ", known) + " (docs/jobs.md)";
    }

    /** Levenshtein distance: the edits from {@code a} to {@code b}. */
    private static int distance(String a, String b) {
        int[] prev = new int[b.length() + 1], cur = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) prev[j] = j;
        for (int i = 1; i <= a.length(); i++) {
            cur[0] = i;
            for (int j = 1; j <= b.length(); j++)
                cur[j] = Math.min(Math.min(cur[j - 1], prev[j]) + 1, prev[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1));
            int[] t = prev;
            prev = cur;
            cur = t;
        }
        return prev[b.length()];
    }

    private static String where(String file, ConfigValue v, String key) {
        int line = v.origin() == null ? -1 : v.origin().lineNumber();
        return file + (line > 0 ? ":" + line : "") + ": " + key;
    }

    private static String text(ConfigValue v) {
        Object u = v.unwrapped();
        return u instanceof Map<?, ?> ? "{...}" : String.valueOf(u);
    }

    // ---- one job ----------------------------------------------------------------------------------------

    /**
     * One job: its own keys over {@code global}'s, and {@code options} (job keys given on the command line with a
     * file) over both.
     */
    private static JobSpec job(Map<String, Val> own, Map<String, Val> global, Map<String, Val> options) {
        String name = own.get("name").text();
        Map<String, Val> k = new LinkedHashMap<>();
        for (String key : JOB_KEYS) {
            Val v = own.containsKey(key) ? own.get(key) : global.get(key);
            if (v != null) k.put(key, v);
        }
        // The three spellings of the request size are one key: a job's own spelling hides global's, an option's
        // hides both.
        List<String> bsKeys = List.of("bs", "bssplit", "bsrange");
        if (bsKeys.stream().anyMatch(own::containsKey)) for (String b : bsKeys) if (!own.containsKey(b)) k.remove(b);
        if (bsKeys.stream().anyMatch(options::containsKey)) for (String b : bsKeys) k.remove(b);
        k.putAll(options);
        Engine engine = k.containsKey("ioengine")
                ? Engine.valueOf(oneOf(k.get("ioengine"), ENGINES).toUpperCase(Locale.ROOT))
                : Engine.QUEUE;
        for (Map.Entry<String, Engine> only : ONLY_FOR.entrySet())
            if (own.containsKey(only.getKey()) && only.getValue() != engine)
                throw own.get(only.getKey()).bad("only for ioengine=" + only.getValue().id() + " (this job is ioengine="
                        + engine.id() + ")");
        List<String> bsGiven = bsKeys.stream().filter(k::containsKey).toList();
        if (bsGiven.size() > 1)
            throw k.get(bsGiven.get(1)).bad("give one of bs, bssplit and bsrange (" + bsGiven.get(0) + " is given too)");
        SizeMix bs = SizeMix.single(4096);
        if (k.containsKey("bs")) bs = SizeMix.single(size(k.get("bs"), 1));
        if (k.containsKey("bssplit")) bs = mix(k.get("bssplit"), true);
        if (k.containsKey("bsrange")) bs = mix(k.get("bsrange"), false);

        Rw rw = k.containsKey("rw") ? Rw.of(oneOf(k.get("rw"), Rw.NAMES)) : Rw.READ;
        int rwmix = k.containsKey("rwmixread") ? (int) whole(k.get("rwmixread"), 0, 100) : 50;
        if (own.containsKey("rwmixread") && !rw.mixed())
            throw own.get("rwmixread").bad("only for a mixed rw (readwrite, rw, randrw), not " + rw.id);
        Long size = k.containsKey("size") ? size(k.get("size"), 1) : null;
        long runtime = k.containsKey("runtime") ? duration(k.get("runtime"), 1_000_000_000L) : 0;
        boolean timeBased = k.containsKey("time_based") && bool(k.get("time_based"));
        if (timeBased && runtime == 0) throw k.get("time_based").bad("needs a runtime");
        // A job from options alone has no name key to point at: the message names the option that is missing.
        boolean fromOptions = own.get("name").where().startsWith("--");
        String job = fromOptions ? "--size" : own.get("name").where(), value = fromOptions ? "" : name;
        if (size == null && runtime == 0)
            throw new BadOption(job, value, "a job needs a size or a runtime" + (fromOptions ? ": --size=SIZE or --runtime=TIME" : ""));
        if (engine == Engine.FILES && size == null)
            throw new BadOption(job, value, "an ioengine=files job needs a size: the bytes of each file");
        long ramp = k.containsKey("ramp_time") ? duration(k.get("ramp_time"), 1_000_000_000L) : 0;
        Set<IoFlag> flags = EnumSet.noneOf(IoFlag.class);
        if (k.containsKey("flags") && engine == Engine.QUEUE) {
            Val f = k.get("flags");
            flags = flags(f);
            if (flags.contains(IoFlag.AHEAD) && rw.writes) throw f.bad("ahead marks read-ahead: only for rw=read or randread");
        }
        double high = k.containsKey("fill_high") ? fraction(k.get("fill_high"), 0, 1) : 0.9;
        double low = k.containsKey("fill_low") ? fraction(k.get("fill_low"), 0, high) : Math.max(high - 0.2, high / 2);
        return new JobSpec(name, engine, rw, rwmix, bs, size,
                k.containsKey("offset") ? size(k.get("offset"), 0) : 0,
                k.containsKey("offset_increment") ? size(k.get("offset_increment"), 0) : 0,
                runtime, timeBased, ramp,
                k.containsKey("iodepth") ? (int) whole(k.get("iodepth"), 1, MAX_IODEPTH) : 1,
                k.containsKey("numjobs") ? (int) whole(k.get("numjobs"), 1, MAX_NUMJOBS) : 1,
                k.containsKey("thinktime") ? duration(k.get("thinktime"), 1_000L) : 0,
                flags,
                k.containsKey("nrfiles") ? (int) whole(k.get("nrfiles"), 1, MAX_NRFILES) : 1,
                k.containsKey("truncate_to") ? size(k.get("truncate_to"), 0) : null,
                k.containsKey("unit") ? size(k.get("unit"), 1) : 4096,
                k.containsKey("max_extent") ? size(k.get("max_extent"), 0) : 0,
                high, low, Map.copyOf(k));
    }

    private static Set<IoFlag> flags(Val f) {
        Set<IoFlag> flags = EnumSet.noneOf(IoFlag.class);
        for (String one : names(f)) {
            String upper = one.toUpperCase(Locale.ROOT);
            if (!List.of("SYNC", "META", "AHEAD").contains(upper)) throw f.bad("allowed are sync, meta, ahead");
            flags.add(IoFlag.valueOf(upper));
        }
        return flags;
    }

    // ---- values -----------------------------------------------------------------------------------------

    private static long size(Val v, long min) {
        long n;
        try {
            n = Sizes.parse(v.text());
        } catch (IllegalArgumentException e) {
            throw v.bad("must be a size such as 4096, 4k, 64KiB, 1GiB (docs/cli.md)");
        }
        if (n < min) throw v.bad("must be at least " + min + " bytes");
        return n;
    }

    private static long sectors(Val v) {
        long n = size(v, 512);
        if (n % 512 != 0) throw v.bad("must be a whole number of 512-byte sectors");
        return n;
    }

    private static SizeMix mix(Val v, boolean split) {
        try {
            SizeMix m = split ? SizeMix.split(v.text()) : SizeMix.range(v.text());
            if (m.min() < 1) throw new IllegalArgumentException("a size of 0");
            return m;
        } catch (IllegalArgumentException e) {
            throw v.bad((split ? "must be SIZE/PERCENT:SIZE/PERCENT..., such as 4k/50:64k/50" : "must be LOW-HIGH, such as 4k-64k")
                    + " (" + e.getMessage() + ")");
        }
    }

    private static long whole(Val v, long min, long max) {
        long n;
        if (v.raw() instanceof Number num && num.doubleValue() == Math.rint(num.doubleValue())) {
            n = num.longValue();
        } else {
            try {
                n = Long.parseLong(v.text().trim().replace("_", ""));
            } catch (NumberFormatException e) {
                throw v.bad("must be a whole number from " + min + " to " + max);
            }
        }
        if (n < min || n > max) throw v.bad("must be from " + min + " to " + max);
        return n;
    }

    /** In {@code (low, high)}: a fill mark is a fraction of the volume, strictly inside. */
    /** {@code prefill}: 0 (none), or a fraction of the data blocks above 0 and below 1. */
    private static double prefill(Val v) {
        return v.text().trim().matches("0*\\.?0*") && !v.text().trim().matches("\\.?") ? 0 : fraction(v, 0, 1);
    }

    private static double fraction(Val v, double low, double high) {
        double d;
        try {
            d = Double.parseDouble(v.text().trim());
        } catch (NumberFormatException e) {
            throw v.bad("must be a fraction above " + low + " and below " + high);
        }
        if (!(d > low && d < high)) throw v.bad("must be above " + low + " and below " + high);
        return d;
    }

    private static boolean bool(Val v) {
        return switch (v.text().trim().toLowerCase(Locale.ROOT)) {
            case "true", "1", "yes", "on" -> true;
            case "false", "0", "no", "off" -> false;
            default -> throw v.bad("must be true or false (1 or 0)");
        };
    }

    private static String oneOf(Val v, List<String> allowed) {
        String s = v.text().trim().toLowerCase(Locale.ROOT);
        if (!allowed.contains(s)) throw v.bad("allowed are " + String.join(", ", allowed));
        return s;
    }

    /** A list, in HOCON ({@code [a, b]}) or as one comma-separated string. */
    private static List<String> names(Val v) {
        List<String> out = new ArrayList<>();
        for (String s : v.raw() instanceof List<?> l ? l.stream().map(String::valueOf).toList() : List.of(v.text().split(",")))
            if (!s.isBlank()) out.add(s.trim());
        if (out.isEmpty()) throw v.bad("must name at least one");
        return out;
    }

    /**
     * A time: a number with a unit ({@code ns}, {@code us}, {@code ms}, {@code s}, {@code m}, {@code h}), or a
     * plain number in fio's unit for the key ({@code plainNanos}: seconds for runtime and ramp_time, microseconds
     * for thinktime).
     */
    private static long duration(Val v, long plainNanos) {
        String s = v.text().trim().toLowerCase(Locale.ROOT).replace("_", "");
        int i = 0;
        while (i < s.length() && (Character.isDigit(s.charAt(i)) || s.charAt(i) == '.')) i++;
        String unit = s.substring(i).trim();
        long mult = switch (unit) {
            case "" -> plainNanos;
            case "ns" -> 1L;
            case "us", "µs" -> 1_000L;
            case "ms" -> 1_000_000L;
            case "s" -> 1_000_000_000L;
            case "m", "min" -> 60_000_000_000L;
            case "h" -> 3_600_000_000_000L;
            default -> -1;
        };
        double n;
        try {
            n = i == 0 ? -1 : Double.parseDouble(s.substring(0, i));
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (mult < 0 || n < 0 || n * mult > 365 * 86_400e9)
            throw v.bad("must be a time such as 10s, 500ms, 250us, 2m (a plain number is in "
                    + (plainNanos == 1_000L ? "microseconds" : "seconds") + ")");
        return (long) (n * mult);
    }

    /** The run's settings and the jobs, for the JSON's parameters. */
    Map<String, Object> toMap() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("job_file", source);
        m.put("device", device);
        m.put("filename", filename);
        m.put("device_size", deviceSizeBytes);
        m.put("direct", direct);
        m.put("allow_overwrite", allowOverwrite);
        m.put("elevator", elevators);
        m.put("volume_size", volumeBytes);
        m.put("prefill", prefill);
        m.put("seed", seed);
        m.put("jobs", jobs.stream().map(JobSpec::toMap).toList());
        return m;
    }
}
