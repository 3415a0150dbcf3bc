package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.Extent;

/**
 * A write that allocates blocks is answered once its data and the commit that marks the blocks written are
 * durable; a disk may reorder what it has not flushed, so the data must be flushed before the commit's log writes
 * go out. Otherwise a power cut can keep the commit and lose the data, and the file shows the block's old
 * contents (what {@code bench powerloss} found). Checked on the recorded write stream: between the data's write
 * and the first log write after it lies a flush.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class DataBeforeCommitTest {
    @TempDir
    Path dir;

    @Test
    void theDataOfAnAllocatingWriteIsFlushedBeforeTheCommitThatMarksItWrittenIsWritten() {
        Path image = Volumes.make(dir, 2);
        Layout layout = Volumes.layout(2);
        int bs = layout.blockSize();
        long logFrom = layout.journalStart() * bs, logTo = (layout.journalStart() + layout.journalBlocks()) * bs;
        WriteLog log = WriteLog.attach(image);
        long dataAt;
        try {
            Volume v = Volumes.open(image);
            try {
                join(v.allocator().open("/f"));
                for (int round = 0; round < 3; round++) {
                    ByteBuffer data = ByteBuffer.allocate(bs);
                    while (data.hasRemaining()) data.put((byte) (0x5a + round));
                    join(v.fileStore().write("/f", (long) round * bs, data.flip()));
                }
                List<Extent> mapped = join(v.allocator().fileExtents("/f"));
                dataAt = mapped.get(0).start() * bs;
            } finally {
                log.detach();
                v.abandon();
            }
        } catch (RuntimeException e) {
            log.detach();
            throw e;
        }
        List<WriteLog.Event> events = log.events();
        int checked = 0;
        for (int i = 0; i < events.size(); i++) {
            if (!(events.get(i) instanceof WriteLog.Write w) || w.position() < dataAt || w.position() >= dataAt + 3L * bs)
                continue;
            boolean flushed = false;
            int j = i + 1;
            for (; j < events.size(); j++) {
                WriteLog.Event e = events.get(j);
                if (e instanceof WriteLog.Flush) flushed = true;
                if (e instanceof WriteLog.Write l && l.position() >= logFrom && l.position() < logTo) break;
            }
            assertTrue(j < events.size(), "a commit follows the data write at event " + i);
            assertTrue(flushed, "the data written at event " + i + " is flushed before the log write at event " + j
                    + ": " + events.subList(i, j + 1).stream().map(DataBeforeCommitTest::brief).toList());
            checked++;
        }
        assertEquals(3, checked, "each of the three writes' data was seen");
    }

    private static String brief(WriteLog.Event e) {
        return e instanceof WriteLog.Write w ? "write " + w.bytes().length + " B at " + w.position() : "flush";
    }
}
