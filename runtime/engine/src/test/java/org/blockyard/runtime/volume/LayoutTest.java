package org.blockyard.runtime.volume;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The journal mkfs makes: mke2fs's size for the volume, held to half of group 0, never below the minimum. */
class LayoutTest {
    private static final long MIB = 1L << 20, GIB = 1L << 30;

    private static int journal(long volumeBytes, int blockSize, int blocksPerGroup, int fileTable, int minimum) {
        return Layout.defaultJournalBlocks(blockSize, volumeBytes / blockSize, blocksPerGroup, fileTable, minimum);
    }

    @Test
    void smallVolumesGetMke2fsSizes() {
        assertEquals(1024, journal(100 * MIB, 4096, 32768, 64, 8)); // 4 MiB below 128 MiB
        assertEquals(4096, journal(512 * MIB, 4096, 32768, 64, 8)); // 16 MiB below 1 GiB
        assertEquals(8192, journal(1536 * MIB, 4096, 32768, 64, 8)); // 32 MiB below 2 GiB
        assertEquals((8192 - 2 - 1 - 64) / 2, journal(100 * MIB, 1024, 8192, 64, 8)); // 4 MiB of 1 KiB blocks: more than half of group 0
    }

    @Test
    void bigVolumesAreHeldToHalfOfGroupZero() {
        // 1 TiB in 8,192 groups: 64 descriptor blocks; group 0 has a header and a bitmap block besides.
        int j = journal(1024 * GIB, 4096, 32768, 1024, 1024);
        assertEquals((32768 - 2 - 64 - 1024) / 2, j); // mke2fs would make 1 GiB (262,144 blocks)
        Layout l = Layout.make(4096, 1024 * GIB / 4096, 32768, 1024, j, 0, 0);
        assertEquals(j, l.journalBlocks());
        long data0 = l.geometry().blocksPerGroup() - l.geometry().systemBlocks(0);
        assertTrue(data0 >= j, "group 0 keeps at least as many blocks for data as the journal takes: " + data0);
        // 8 GiB would get 64 MiB (16,384 blocks) but group 0 holds 15,870 beside the rest.
        assertEquals((32768 - 2 - 2 - 1024) / 2, journal(8 * GIB, 4096, 32768, 1024, 1024));
    }

    @Test
    void theMinimumWinsAndMakeRefusesWhatGroupZeroCannotHold() {
        assertEquals(4000, journal(GIB, 4096, 8192, 1024, 4000)); // half of group 0 would be 3,582
        assertThrows(IllegalArgumentException.class, () -> Layout.make(4096, GIB / 4096, 8192, 1024, 8000, 0, 0));
    }
}
