package org.blockyard.embedded;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

import org.blockyard.api.alloc.Geometry;

/**
 * The configuration of PID {@code org.blockyard.embedded}, checked. Without a configuration every key takes
 * its default; the keys not here (window sizes, queue limits, configured elevator tunables) come from
 * blockyard.conf.
 *
 * <p>Tunables of plugins are properties of the same configuration, one per value:
 * {@code elevator.ID.TUNABLE} for an elevator, {@code policy.ID.TUNABLE} for an allocation policy, with ID
 * an id or alias and the value a whole number ({@code elevator.deadline.fifo_batch = 8},
 * {@code policy.reservation.initial_window_blocks = 16}). They override blockyard.conf's and apply in place.
 *
 * @param volumeBytes    the volume's size; a whole number of blocks
 * @param blockBytes     bytes per block
 * @param blocksPerGroup blocks per group, each group one actor
 * @param device         {@code memory} or {@code file}
 * @param filePath       the image file of the file device, created when missing
 * @param elevator       the I/O scheduler by id or alias; empty = blockyard.conf's
 * @param policy         the allocation policy by id or alias; empty = blockyard.conf's
 * @param tunables       the tunable values configured, by family prefix ({@value #ELEVATOR}, {@value #POLICY}),
 *                       plugin name and tunable
 * @param refused        one line for each tunable property that is not a whole number (it is left out)
 */
record EmbeddedSettings(long volumeBytes, int blockBytes, int blocksPerGroup, String device, String filePath,
                        String elevator, String policy, Map<String, Map<String, Map<String, Long>>> tunables,
                        List<String> refused) {

    /** The prefix of an elevator's tunable properties. */
    static final String ELEVATOR = "elevator";
    /** The prefix of an allocation policy's tunable properties. */
    static final String POLICY = "policy";

    @ObjectClassDefinition(name = "Blockyard embedded", description = "The volume behind the BlockAllocator and "
            + "BlockQueue services. A change of elevator, policy or tunables alone applies in place; any other "
            + "change restarts the volume (a memory volume starts empty). A configuration that cannot be is one "
            + "logged line, and no volume runs until it is fixed.")
    @interface Ocd {
        @AttributeDefinition(description = "Volume size with a unit (64MiB, 16GiB); a whole number of blocks. "
                + "256 MiB keeps a memory volume small unless asked.")
        String volume_size() default "256MiB";

        @AttributeDefinition(description = "Bytes per block (ext3 block size).")
        int block_size() default 4096;

        @AttributeDefinition(description = "Blocks per group; each group is one actor with its own bitmap. "
                + "32768 is ext3's for 4 KiB blocks (one bitmap block).")
        int blocks_per_group() default 32768;

        @AttributeDefinition(description = "memory or file.")
        String device() default "memory";

        @AttributeDefinition(description = "Image file of the file device; created when missing.")
        String file_path() default "blockyard.img";

        @AttributeDefinition(description = "I/O scheduler by id or alias (noop, deadline, or a plugin's); "
                + "empty for blockyard.conf's. A plugin not installed yet is selected when it arrives, and again "
                + "when it comes back after an update or a restart; meanwhile the default runs. Its tunables: "
                + "properties elevator.ID.TUNABLE (elevator.deadline.fifo_batch = 8).", required = false)
        String elevator() default "";

        @AttributeDefinition(description = "Allocation policy by id or alias (reservation, no-reservation, or a "
                + "plugin's); empty for blockyard.conf's; selected as the elevator is. Its tunables: properties "
                + "policy.ID.TUNABLE (policy.reservation.initial_window_blocks = 16).", required = false)
        String policy() default "";
    }

    EmbeddedSettings {
        tunables = Map.copyOf(tunables);
        refused = List.copyOf(refused);
        if (blockBytes < 512 || Integer.bitCount(blockBytes) != 1)
            throw new IllegalArgumentException("block.size must be a power of two of at least 512, not " + blockBytes);
        if (volumeBytes <= 0 || volumeBytes % blockBytes != 0)
            throw new IllegalArgumentException("volume.size must be a whole number of " + blockBytes + "-byte blocks, not "
                    + volumeBytes + " bytes");
        if (!device.equals("memory") && !device.equals("file"))
            throw new IllegalArgumentException("device must be memory or file, not " + device);
        try {
            Geometry.of(blockBytes, volumeBytes / blockBytes, blocksPerGroup);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("volume.size of " + volumeBytes / blockBytes + " blocks in groups of "
                    + "blocks.per.group " + blocksPerGroup + " is no volume: " + e.getMessage());
        }
    }

    /**
     * The settings of {@code c}, with the tunables among the configuration's {@code properties}; a setting that
     * cannot be is an IllegalArgumentException whose message is one line naming the key.
     */
    static EmbeddedSettings from(Ocd c, Map<String, ?> properties) {
        long bytes;
        try {
            bytes = ConfigFactory.empty().withValue("v", ConfigValueFactory.fromAnyRef(c.volume_size())).getBytes("v");
        } catch (ConfigException e) {
            throw new IllegalArgumentException("volume.size '" + c.volume_size() + "' is not a size (a number with a "
                    + "unit, such as 64MiB or 16GiB)");
        }
        Map<String, Map<String, Map<String, Long>>> tunables = new HashMap<>();
        List<String> refused = new ArrayList<>();
        for (Map.Entry<String, ?> p : properties.entrySet()) {
            String key = p.getKey();
            int family = key.indexOf('.'), last = key.lastIndexOf('.');
            if (family < 0 || last == family) continue;
            String prefix = key.substring(0, family);
            if (!prefix.equals(ELEVATOR) && !prefix.equals(POLICY)) continue;
            Long value = wholeNumber(p.getValue());
            if (value == null) {
                refused.add(key + " = '" + p.getValue() + "' is not a whole number; left out");
                continue;
            }
            tunables.computeIfAbsent(prefix, x -> new HashMap<>())
                    .computeIfAbsent(key.substring(family + 1, last), x -> new LinkedHashMap<>())
                    .put(key.substring(last + 1), value);
        }
        return new EmbeddedSettings(bytes, c.block_size(), c.blocks_per_group(), c.device().trim(), c.file_path(),
                c.elevator().trim(), c.policy().trim(), tunables, refused);
    }

    private static Long wholeNumber(Object v) {
        if (v instanceof Long || v instanceof Integer || v instanceof Short || v instanceof Byte) return ((Number) v).longValue();
        if (!(v instanceof String str)) return null;
        try {
            return Long.parseLong(str.trim());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The tunable values configured for one family ({@value #ELEVATOR}, {@value #POLICY}), by plugin name. */
    Map<String, Map<String, Long>> tunables(String family) {
        return tunables.getOrDefault(family, Map.of());
    }

    /** Whether {@code other} describes the same volume on the same device (elevator and policy aside). */
    boolean sameVolume(EmbeddedSettings other) {
        return other != null && volumeBytes == other.volumeBytes && blockBytes == other.blockBytes
                && blocksPerGroup == other.blocksPerGroup && device.equals(other.device)
                && filePath.equals(other.filePath);
    }

    /**
     * The engine keys these settings decide, over blockyard.conf. The elevator and the policy are not among
     * them: the store starts with blockyard.conf's, and the configured ones are selected once the plugins
     * bound so far are registered, so a plugin's id does not start out as "not found".
     */
    Config overrides() {
        Map<String, Object> m = new HashMap<>();
        m.put("blockyard.volume.block-size", blockBytes);
        m.put("blockyard.volume.blocks-per-group", blocksPerGroup);
        return BlockyardComponent.engineOverrides(m);
    }
}
