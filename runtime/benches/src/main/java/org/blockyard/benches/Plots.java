package org.blockyard.benches;

import java.awt.BasicStroke;
import java.awt.Color;
import java.io.IOException;
import java.nio.file.Path;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;

import org.jfree.chart.ChartFactory;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;

/**
 * The PNG plots of {@code --plot DIR}, drawn with JFreeChart without a display ({@code java.awt.headless}),
 * from the rows a bench reports, so a plot shows what the JSON holds: one line per row (a policy, an
 * allocator, an elevator), labelled by the caller. Two kinds: a latency CDF from a row's {@code [percentile,
 * value]} pairs ({@link Latency#cdf}), and a figure over time from a row's list of numbers, one per step
 * (a round, a second).
 */
public final class Plots {
    static {
        // Before the first chart touches AWT: no display is needed, nor used if there is one.
        System.setProperty("java.awt.headless", "true");
    }

    /** Pixels of every plot: legible on a README page and a few tens of KiB as PNG. */
    public static final int WIDTH = 800, HEIGHT = 480;

    /** One colour per line, in the order of the rows (Tableau 10: told apart in print and by most colour-blind readers). */
    private static final Color[] COLOURS = {new Color(0x4E79A7), new Color(0xF28E2B), new Color(0xE15759),
            new Color(0x76B7B2), new Color(0x59A14F), new Color(0xEDC948), new Color(0xB07AA1), new Color(0xFF9DA7),
            new Color(0x9C755F), new Color(0xBAB0AC)};

    private Plots() {}

    /**
     * {@code dir} made ready for plots: created with its parents when missing. A path that is a file, or a
     * directory that cannot be made or written in, is a {@link BadOption} on {@code --plot}.
     */
    public static Path directory(Path dir) {
        return BadOption.outputDirectory("--plot", dir);
    }

    /**
     * A latency CDF: for each row, the fraction of requests (y) that took at most x, x on a log axis in
     * {@code unit}; the row's pairs are under {@code key}. Writes {@code dir/name.png} and answers its path.
     */
    public static Path latencyCdf(Path dir, String name, String title, String unit, List<Map<String, Object>> rows,
                                  Function<Map<String, Object>, String> label, String key) throws IOException {
        XYSeriesCollection lines = new XYSeriesCollection();
        for (Map<String, Object> row : rows) {
            XYSeries s = new XYSeries(label.apply(row), false, true);
            if (row.get(key) instanceof List<?> pairs)
                for (Object p : pairs) {
                    List<?> pair = (List<?>) p;
                    double value = ((Number) pair.get(1)).doubleValue();
                    if (value > 0) s.add(value, ((Number) pair.get(0)).doubleValue() / 100); // a log axis has no 0
                }
            lines.addSeries(s);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, null, null, lines, PlotOrientation.VERTICAL, true, false, false);
        XYPlot plot = chart.getXYPlot();
        plot.setDomainAxis(logAxis("latency (" + unit + ", log scale)"));
        NumberAxis y = (NumberAxis) plot.getRangeAxis();
        y.setLabel("fraction of requests at most this long");
        y.setRange(0, 1.02);
        return write(dir, name, chart, false);
    }

    /**
     * A figure over time: for each row, the numbers under {@code key}, the i-th at x = {@code xFirst + i *
     * xStep}; y on a log axis with {@code logY} (for rows that differ tenfold). Writes {@code dir/name.png}
     * and answers its path.
     */
    public static Path overTime(Path dir, String name, String title, String xLabel, String yLabel,
                                List<Map<String, Object>> rows, Function<Map<String, Object>, String> label, String key,
                                double xFirst, double xStep, boolean logY) throws IOException {
        XYSeriesCollection lines = new XYSeriesCollection();
        for (Map<String, Object> row : rows) {
            XYSeries s = new XYSeries(label.apply(row), false, true);
            if (row.get(key) instanceof List<?> values)
                for (int i = 0; i < values.size(); i++) {
                    double y = ((Number) values.get(i)).doubleValue();
                    if (!logY || y > 0) s.add(xFirst + i * xStep, y); // a log axis has no 0
                }
            lines.addSeries(s);
        }
        JFreeChart chart = ChartFactory.createXYLineChart(title, xLabel, yLabel, lines, PlotOrientation.VERTICAL, true, false, false);
        chart.getXYPlot().getDomainAxis().setStandardTickUnits(NumberAxis.createIntegerTickUnits()); // rounds, seconds
        if (logY) chart.getXYPlot().setRangeAxis(logAxis(yLabel + ", log scale"));
        else ((NumberAxis) chart.getXYPlot().getRangeAxis()).setAutoRangeIncludesZero(true);
        return write(dir, name, chart, true);
    }

    /** A log axis whose ticks read as the tables' numbers (12.6, 100, 1,318), not as powers of ten. */
    private static LogAxis logAxis(String label) {
        LogAxis a = new LogAxis(label);
        a.setSmallestValue(1e-3);
        a.setNumberFormatOverride(new NumberFormat() {
            @Override
            public StringBuffer format(double v, StringBuffer to, FieldPosition pos) {
                return to.append(Report.format(v));
            }

            @Override
            public StringBuffer format(long v, StringBuffer to, FieldPosition pos) {
                return to.append(Report.format(v));
            }

            @Override
            public Number parse(String source, ParsePosition pos) {
                return NumberFormat.getInstance(Locale.ROOT).parse(source, pos); // reads 8,125,802 and 0.41 back
            }
        });
        return a;
    }

    private static Path write(Path dir, String name, JFreeChart chart, boolean points) throws IOException {
        chart.setBackgroundPaint(Color.WHITE);
        XYPlot plot = chart.getXYPlot();
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(Color.LIGHT_GRAY);
        plot.setRangeGridlinePaint(Color.LIGHT_GRAY);
        XYLineAndShapeRenderer r = new XYLineAndShapeRenderer(true, points);
        for (int i = 0; i < plot.getDataset().getSeriesCount(); i++) {
            r.setSeriesPaint(i, COLOURS[i % COLOURS.length]);
            r.setSeriesStroke(i, new BasicStroke(2f));
        }
        plot.setRenderer(r);
        Path file = dir.resolve(name + ".png");
        javax.imageio.ImageIO.setUseCache(false); // no temporary file that a full disk would leave behind
        BadOption.write(file, out -> ChartUtils.writeChartAsPNG(out, chart, WIDTH, HEIGHT));
        return file;
    }
}
