package org.blockyard.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import com.typesafe.config.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.api.alloc.Extent;
import org.blockyard.api.alloc.Geometry;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;

/**
 * An export written sequentially by fio (1 MiB blocks, one at a time, over NBD) keeps its ideal layout on a durable
 * volume: one extent per group it spans, as {@code filefrag} would list them, in logical order at ascending
 * physical addresses. (With several writes in flight the server's workers may map a later write first, which can
 * leave an extra short extent: docs/limits.md.)
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LayoutTest {
    @TempDir
    Path dir;

    @Test
    void aSequentialFioWriteLeavesOneExtentPerGroupItSpans() throws Exception {
        Tool.assumeInstalled("fio");
        Config config = ChildServer.config();
        Path image = dir.resolve("vol.img");
        Volume.mkfs(image, Layout.make(4096, 16384, 1024, 64, 64, 0, 0));
        try (ExportPool pool = ExportPool.open(image, config)) {
            ThinExport e = pool.create("seq", 24L << 20);
            try (NbdServer server = NbdServer.listen(pool, new InetSocketAddress("127.0.0.1", 0))) {
                Tool.Result r = Tool.run(90, "fio", "--name=seq", "--ioengine=nbd", "--uri=" + server.uri() + "/seq",
                        "--rw=write", "--bs=1m", "--iodepth=1", "--numjobs=1", "--size=24m");
                assertEquals(0, r.exit(), r.toString());
            }
            List<Extent> extents = pool.extents(e);
            Geometry g = pool.geometry();
            TreeSet<Integer> groups = new TreeSet<>();
            long blocks = 0;
            for (Extent x : extents) {
                blocks += x.blocks();
                for (int grp = g.groupOf(x.start()); grp <= g.groupOf(x.end() - 1); grp++) groups.add(grp);
            }
            assertEquals(6144, blocks, "the export maps what fio wrote");
            assertEquals(groups.size(), extents.size(), "one extent per group spanned: " + extents);
            for (int i = 1; i < extents.size(); i++)
                assertTrue(extents.get(i).start() > extents.get(i - 1).start(), "ascending: " + extents);
        }
    }
}
