package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.Map;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Metadata;
import org.blockyard.runtime.volume.Volume;

/** tiobench and smallfiles with --volume: the same load in memory and on the volume, the files left on it. */
class DurableBenchTest {
    @TempDir
    Path dir;

    private static final Config CONFIG = BlockyardConfig.load();

    private Path volume(int groups, int fileTableBlocks) {
        Path image = dir.resolve("bench.img");
        Volume.mkfs(image, Layout.make(4096, 4096L * groups, 4096, fileTableBlocks, 256, 0, 0));
        return image;
    }

    private static void assertDurableFigures(Map<String, Object> row) {
        for (String key : new String[] {"durable_allocs_per_s", "durable_vs_memory", "forces_per_alloc", "force_ms"})
            assertTrue(row.containsKey(key), key + " in " + row);
        assertTrue(((Number) row.get("forces")).longValue() > 0, "the durable run forced its journal: " + row);
    }

    private static long files(Metadata m) {
        return m.entries().stream().filter(e -> e.kind == Metadata.KIND_FILE).count();
    }

    @Test
    void tiobenchRunsActorAndThreadWritersOnTheVolumeAndLeavesTheirFilesOnIt() {
        Path image = volume(8, 64);
        for (boolean threads : new boolean[] {false, true}) {
            Map<String, Object> row = Tiobench.run(new Tiobench.Spec(4, 1 << 20, "reservation", 16, 2, threads, 1),
                    CONFIG, image);
            assertDurableFigures(row);
            assertEquals(threads ? "threads" : "actors", row.get("callers"));
        }
        Metadata m = Volume.inspect(image);
        assertEquals(8, files(m), "two runs of four writers, each file under its run's name");
        for (Metadata.Entry e : m.entries()) assertEquals(256, e.map.mappedBlocks(), e.name);
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    /** Blocks per group as the command passes it; with a volume its own geometry rules. */
    private static final int CONFIGURED_BLOCKS_PER_GROUP = 32768;

    @Test
    void smallfilesKeepsItsFilesOnTheVolumeButNotItsFill() {
        smallfilesOnAVolume(false);
    }

    @Test
    void smallfilesWrittenWholeKeepsItsFilesOnTheVolume() {
        smallfilesOnAVolume(true);
    }

    private void smallfilesOnAVolume(boolean wholeFile) {
        Path image = volume(8, 256);
        Map<String, Object> row = SmallFiles.run(new SmallFiles.Spec(60, 0.5, CONFIGURED_BLOCKS_PER_GROUP, "reservation",
                2, 4, 1, false, wholeFile), CONFIG, image);
        assertDurableFigures(row);
        assertTrue(row.containsKey("forces_per_file"));
        Metadata m = Volume.inspect(image);
        assertEquals(60, files(m));
        long owned = m.entries().stream().mapToLong(e -> e.map.mappedBlocks()).sum();
        long used = 0;
        for (int g = 0; g < m.geometry.groups(); g++)
            used += m.geometry.groupBlocks(g) - m.geometry.systemBlocks(g) - m.free(g);
        assertEquals(owned, used, "only the files' blocks are used: the fill lived in memory");
        Fsck.Result r = Fsck.check(image, false);
        assertTrue(r.clean(), r::report);
    }

    @Test
    void aRunTheFileTableCannotHoldIsRefusedBeforeItStarts() {
        Path image = volume(8, 16);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> SmallFiles.run(
                new SmallFiles.Spec(60, 0.5, CONFIGURED_BLOCKS_PER_GROUP, "reservation", 1, 4, 1), CONFIG, image));
        assertTrue(e.getMessage().contains("--file-table-blocks"), e.getMessage());
        assertFalse(files(Volume.inspect(image)) > 0);
    }
}
