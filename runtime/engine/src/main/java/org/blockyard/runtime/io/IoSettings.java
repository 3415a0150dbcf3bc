package org.blockyard.runtime.io;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigValue;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.io.disk.DiskProfile;

/**
 * {@code blockyard.io} of the configuration (see config/blockyard.conf for every key, its unit and reason).
 *
 * @param setup          elevators, limits and plugging
 * @param device         sim | file | mem
 * @param filePath       image file of the file device
 * @param fileBytes      its size
 * @param fileDirect     whether to ask for O_DIRECT
 * @param memoryBytes    capacity of the memory device
 * @param submitTimeout  how long a BlockQueue caller waits for one answer
 * @param disk           the simulated disk's profile
 */
public record IoSettings(QueueSetup setup, String device, Path filePath, long fileBytes, boolean fileDirect,
                         long memoryBytes, Duration submitTimeout, DiskProfile disk) {

    public static IoSettings fromConfig(Config c) {
        Config io = c.getConfig("blockyard.io");
        ElevatorRegistry registry;
        try {
            registry = ElevatorRegistry.builtIn(io.getString("default-scheduler"));
        } catch (IllegalArgumentException e) {
            throw new ConfigException.BadValue("blockyard.io.default-scheduler", e.getMessage());
        }
        QueueLimits limits = new QueueLimits(io.getInt("max-sectors"), io.getInt("logical-block-bytes"),
                io.getInt("physical-block-bytes"), io.getInt("queue-depth"));
        Map<String, Map<String, Long>> tunables = new HashMap<>();
        Config el = io.getConfig("elevators");
        for (String id : el.root().keySet()) {
            Map<String, Long> one = new HashMap<>();
            for (Map.Entry<String, ConfigValue> t : el.getConfig(id).root().entrySet())
                one.put(t.getKey(), el.getConfig(id).getLong(t.getKey()));
            tunables.put(id, one);
        }
        QueueSetup setup = new QueueSetup(registry, io.getString("scheduler"), tunables, limits,
                io.getInt("unplug-threshold"), io.getDuration("unplug-delay").toNanos(), QueueEvents.NONE,
                positive(io, "elevator-stall-limit"), positive(io, "device-timeout"));
        String device = io.getString("device");
        if (!device.equals("sim") && !device.equals("file") && !device.equals("mem"))
            throw new ConfigException.BadValue("blockyard.io.device", "sim, file or mem, not " + device);
        return new IoSettings(setup, device, Path.of(io.getString("file.path")), io.getBytes("file.size"),
                io.getBoolean("file.direct"), io.getBytes("memory.size"), io.getDuration("submit-timeout"),
                DiskProfile.fromConfig(c));
    }

    private static long positive(Config io, String key) {
        long nanos = io.getDuration(key).toNanos();
        if (nanos <= 0) throw new ConfigException.BadValue("blockyard.io." + key, "must be positive");
        return nanos;
    }

    public IoSettings withSetup(QueueSetup s) {
        return new IoSettings(s, device, filePath, fileBytes, fileDirect, memoryBytes, submitTimeout, disk);
    }

    /** Opens the device named {@code kind} (sim, file, mem) as configured. */
    public BlockDevice openDevice(String kind) throws IOException {
        return switch (kind) {
            case "sim" -> new SimulatedDisk(disk);
            case "file" -> new FileDevice(filePath, fileBytes, fileDirect);
            case "mem" -> new MemoryDevice(memoryBytes);
            default -> throw new IllegalArgumentException("device must be sim, file or mem, not " + kind);
        };
    }
}
