package org.blockyard.embedded;

import java.util.HashMap;
import java.util.Map;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;
import com.typesafe.config.ConfigFactory;
import com.typesafe.config.ConfigValueFactory;
import org.osgi.service.metatype.annotations.AttributeDefinition;
import org.osgi.service.metatype.annotations.ObjectClassDefinition;

/**
 * The configuration of PID {@code org.blockyard.embedded}, checked. Without a configuration every key takes
 * its default; the keys not here (window sizes, queue limits, elevator tunables) come from blockyard.conf.
 *
 * @param volumeBytes    the volume's size; a whole number of blocks
 * @param blockBytes     bytes per block
 * @param blocksPerGroup blocks per group, each group one actor
 * @param device         {@code memory} or {@code file}
 * @param filePath       the image file of the file device, created when missing
 * @param elevator       the I/O scheduler by id or alias; empty = blockyard.conf's
 * @param policy         the allocation policy by id or alias; empty = blockyard.conf's
 */
record EmbeddedSettings(long volumeBytes, int blockBytes, int blocksPerGroup, String device, String filePath,
                        String elevator, String policy) {

    @ObjectClassDefinition(name = "Blockyard embedded", description = "The volume behind the BlockAllocator and "
            + "BlockQueue services. A change of elevator or policy alone switches them in place; any other "
            + "change restarts the volume (a memory volume starts empty).")
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
                + "empty for blockyard.conf's. A plugin not installed yet is selected when it arrives.", required = false)
        String elevator() default "";

        @AttributeDefinition(description = "Allocation policy by id or alias (reservation, no-reservation, or a "
                + "plugin's); empty for blockyard.conf's.", required = false)
        String policy() default "";
    }

    EmbeddedSettings {
        if (blockBytes < 512 || Integer.bitCount(blockBytes) != 1)
            throw new IllegalArgumentException("block.size must be a power of two of at least 512, not " + blockBytes);
        if (volumeBytes <= 0 || volumeBytes % blockBytes != 0)
            throw new IllegalArgumentException("volume.size must be a whole number of " + blockBytes + "-byte blocks, not "
                    + volumeBytes + " bytes");
        if (!device.equals("memory") && !device.equals("file"))
            throw new IllegalArgumentException("device must be memory or file, not " + device);
    }

    static EmbeddedSettings from(Ocd c) {
        long bytes;
        try {
            bytes = ConfigFactory.empty().withValue("v", ConfigValueFactory.fromAnyRef(c.volume_size())).getBytes("v");
        } catch (ConfigException e) {
            throw new IllegalArgumentException("volume.size: " + e.getMessage(), e);
        }
        return new EmbeddedSettings(bytes, c.block_size(), c.blocks_per_group(), c.device().trim(), c.file_path(),
                c.elevator().trim(), c.policy().trim());
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
