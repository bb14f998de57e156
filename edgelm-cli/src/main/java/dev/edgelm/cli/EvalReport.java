package dev.edgelm.cli;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.edgelm.util.AtomicFiles;
import dev.edgelm.util.EdgeLmException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.CategoryChart;
import org.knowm.xchart.CategoryChartBuilder;
import org.knowm.xchart.HeatMapChart;
import org.knowm.xchart.HeatMapChartBuilder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.internal.chartpart.Chart;

/**
 * An evaluation's report folder: {@code report.md} (the readable tables), {@code report.json} (every figure) and
 * PNG charts drawn with XChart, headless. Every file is written through a temporary file and renamed. It lives in
 * the command line, not in {@code dev.edgelm.eval}, so that the core needs no chart library.
 */
final class EvalReport {
    private static final ObjectMapper JSON = new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT);
    private static final int WIDTH = 900;
    private static final int HEIGHT = 500;

    private final String title;
    private final StringBuilder markdown = new StringBuilder();
    private final Map<String, Object> json = new LinkedHashMap<>();
    private final List<Map.Entry<String, Chart<?, ?>>> charts = new ArrayList<>();

    public EvalReport(String title) {
        this.title = title;
        json.put("gate", title);
    }

    public EvalReport text(String md) {
        markdown.append(md).append("\n\n");
        return this;
    }

    /** A preformatted block (a table as the terminal shows it). */
    public EvalReport block(String text) {
        markdown.append("```\n").append(text.stripTrailing()).append("\n```\n\n");
        return this;
    }

    public EvalReport put(String key, Object value) {
        json.put(key, value);
        return this;
    }

    /** A line chart of one or more series over the same x values. */
    public EvalReport line(String file, String chartTitle, String xLabel, String yLabel, double[] x, Map<String, double[]> series) {
        XYChart c = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(chartTitle).xAxisTitle(xLabel).yAxisTitle(yLabel).build();
        c.getStyler().setMarkerSize(4);
        series.forEach((name, y) -> c.addSeries(name, x, y));
        return chart(file, c);
    }

    /** A bar chart of one value per category. */
    public EvalReport bars(String file, String chartTitle, String yLabel, List<String> categories, Map<String, List<Double>> series) {
        CategoryChart c = new CategoryChartBuilder().width(WIDTH).height(HEIGHT).title(chartTitle).yAxisTitle(yLabel).build();
        c.getStyler().setXAxisLabelRotation(45);
        series.forEach((name, values) -> c.addSeries(name, categories, values));
        return chart(file, c);
    }

    /** A grid: one cell per (x, y), coloured by value (the sweep: 1 clean, 0 not). */
    public EvalReport grid(String file, String chartTitle, List<?> x, List<?> y, List<Number[]> cells) {
        HeatMapChart c = new HeatMapChartBuilder().width(Math.max(WIDTH, 12 * x.size() + 200)).height(HEIGHT).title(chartTitle).build();
        c.getStyler().setRangeColors(new java.awt.Color[] {new java.awt.Color(0xd7301f), new java.awt.Color(0x1a9850)});
        c.getStyler().setShowValue(false);
        c.getStyler().setXAxisLabelRotation(90);
        c.addSeries("clean", x, y, cells);
        return chart(file, c);
    }

    private EvalReport chart(String file, Chart<?, ?> c) {
        charts.add(Map.entry(file, c));
        markdown.append("![").append(file).append("](").append(file).append(")\n\n");
        return this;
    }

    public void write(Path dir) {
        System.setProperty("java.awt.headless", "true");
        try {
            Files.createDirectories(dir);
            AtomicFiles.write(dir.resolve("report.md"), out -> out.write(("# " + title + "\n\n" + markdown).getBytes(StandardCharsets.UTF_8)));
            AtomicFiles.write(dir.resolve("report.json"), out -> out.write(JSON.writeValueAsBytes(json)));
            for (Map.Entry<String, Chart<?, ?>> e : charts) {
                byte[] png = BitmapEncoder.getBitmapBytes(e.getValue(), BitmapEncoder.BitmapFormat.PNG);
                AtomicFiles.write(dir.resolve(e.getKey()), out -> out.write(png));
            }
        } catch (IOException e) {
            throw new EdgeLmException(dir + ": cannot write the report: " + e.getMessage());
        }
    }
}
