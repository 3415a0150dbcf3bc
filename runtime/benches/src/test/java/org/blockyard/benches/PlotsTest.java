package org.blockyard.benches;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.awt.image.BufferedImage;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** {@code --plot DIR}: each kind of plot is a PNG of the set size, and a wrong DIR is refused before a run. */
class PlotsTest {
    @TempDir
    Path dir;

    private static void assertPng(Path file) throws Exception {
        assertTrue(Files.isRegularFile(file), file + " written");
        BufferedImage image = ImageIO.read(file.toFile());
        assertTrue(image != null, file + " is an image ImageIO reads");
        assertEquals(Plots.WIDTH, image.getWidth());
        assertEquals(Plots.HEIGHT, image.getHeight());
    }

    private static Map<String, Object> row(String name, long scale) {
        Histogram h = new Histogram(3);
        for (long v = 1; v <= 1000; v++) h.recordValue(v * scale * 1000);
        return Map.of("name", name, "cdf", Latency.cdf(h, 1000), "series", List.of(1.0, 3.0 * scale, 2.0, 0.5));
    }

    @Test
    void eachKindOfPlotIsAPngOfTheSetSize() throws Exception {
        List<Map<String, Object>> rows = List.of(row("a", 1), row("b", 10));
        assertPng(Plots.latencyCdf(dir, "cdf", "a CDF", "µs", rows, r -> (String) r.get("name"), "cdf"));
        assertPng(Plots.overTime(dir, "linear", "over time", "round", "score", rows, r -> (String) r.get("name"), "series", 0, 1, false));
        assertPng(Plots.overTime(dir, "log", "over time", "round", "rate", rows, r -> (String) r.get("name"), "series", 0, 1, true));
    }

    @Test
    void benchExtentsPlotsTheLatencyCdfTheScoreAndTheRateOfEachShape() throws Exception {
        Path plots = dir.resolve("new/plots");
        int rc = new CommandLine(new ExtentsCommand()).execute("--shape", "aging,random-64k", "--allocator", "global-lock",
                "--volume-size", "512MiB", "--unit", "64KiB", "--rounds", "2", "--overwrite", "0.2", "--no-warmup",
                "--quiet", "--plot", plots.toString(), "--json", dir.resolve("e.json").toString());
        assertEquals(0, rc);
        for (String shape : List.of("aging", "random-64k"))
            for (String kind : List.of("latency-cdf", "score", "allocs-per-s")) assertPng(plots.resolve("extents-" + shape + "-" + kind + ".png"));
    }

    @Test
    void aFileOrAPathUnderAFileIsNoPlotDirectory() throws Exception {
        Path file = Files.writeString(dir.resolve("f"), "x");
        assertTrue(assertThrows(BadOption.class, () -> Plots.directory(file)).getMessage().startsWith("--plot '"));
        assertTrue(assertThrows(BadOption.class, () -> Plots.directory(file.resolve("sub"))).getMessage()
                .contains("cannot be made a directory"));
    }
}
