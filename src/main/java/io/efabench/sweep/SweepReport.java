package io.efabench.sweep;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.HeatMapChart;
import org.knowm.xchart.HeatMapChartBuilder;

import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;

/**
 * What rank 0 writes when the sweep ends: the findings worst first (printed and
 * {@code findings.txt}), the full pair x rail matrix ({@code sweep.json}, {@code sweep.csv}) and a
 * heatmap per rail ({@code heatmap-rail<k>.png}: node x node, each cell the pair's slower direction in Gbps).
 */
final class SweepReport {
    static {
        System.setProperty("java.awt.headless", "true");
    }

    private SweepReport() {}

    static void write(Path dir, Fleet fleet, List<LinkResult> links, Judge judge, List<Finding> findings, Map<Integer, String> dead,
            SweepOptions o, double wallSeconds, PrintStream out) {
        try {
            Files.createDirectories(dir);
            String table = table(fleet, links, judge, findings, wallSeconds);
            out.print(table);
            Files.writeString(dir.resolve("findings.txt"), table);
            Files.writeString(dir.resolve("sweep.json"), json(fleet, links, judge, findings, dead, o, wallSeconds));
            Files.writeString(dir.resolve("sweep.csv"), csv(fleet, links, judge));
            // A runtime made with jlink may leave java.desktop out (the charts need java.awt): the
            // findings are written, the heatmaps skipped with a line, the verdict unchanged.
            boolean charts = ModuleLayer.boot().findModule("java.desktop").isPresent();
            for (int k = 0; charts && k < fleet.rails(); k++) {
                heatmap(fleet, links, k, dir.resolve("heatmap-rail" + k + ".png"));
            }
            out.println("sweep: wrote " + dir + " (findings.txt, sweep.json, sweep.csv" + (charts ? ", heatmap-rail*.png)"
                    : "; no heatmaps: this Java runtime has no java.desktop module)"));
        } catch (IOException e) {
            out.println("sweep: cannot write " + dir + ": " + e.getMessage());
        }
    }

    static String table(Fleet fleet, List<LinkResult> links, Judge judge, List<Finding> findings, double wallSeconds) {
        StringBuilder b = new StringBuilder();
        long pairs = links.stream().filter(l -> !l.retest()).map(l -> l.a() + "-" + l.b()).distinct().count();
        b.append(String.format(Locale.ROOT, "sweep: %d nodes x %d rails, %d pairs, %d measurements, %.0f s%n", fleet.nodes(),
                fleet.rails(), pairs, links.size(), wallSeconds));
        for (int k = 0; k < fleet.rails(); k++) {
            b.append(String.format(Locale.ROOT, "  rail %d: median %.3f Gbps, reference %.3f Gbps, round trip p50 %.1f us, p99 %.1f us%n",
                    k, judge.railMedianGbps(k), judge.railReferenceGbps(k), judge.railMedianP50us(k), judge.railTailUs(k)));
        }
        if (findings.isEmpty()) {
            b.append("sweep: nothing flagged\n");
            return b.toString();
        }
        b.append("sweep: ").append(findings.size()).append(findings.size() == 1 ? " finding" : " findings").append(", worst first\n");
        b.append(String.format(Locale.ROOT, "  %-2s %-6s %-18s %-5s %-28s %-12s %-12s %s%n", "#", "what", "node", "rail", "NIC", "figure",
                "reference", "why"));
        int i = 1;
        for (Finding f : findings) {
            String node = f.node() >= 0 ? fleet.hosts().get(f.node()) : "-";
            String nic = f.node() >= 0 && f.rail() >= 0 ? fleet.nic(f.node(), f.rail()) : "-";
            b.append(String.format(Locale.ROOT, "  %-2d %-6s %-18s %-5s %-28s %-12s %-12s %s%n", i++, f.kind(), node,
                    f.rail() >= 0 ? Integer.toString(f.rail()) : "all", nic, gbps(f.figure()), gbps(f.reference()), names(fleet, f.why())));
        }
        return b.toString();
    }

    private static String gbps(double g) {
        return Double.isNaN(g) ? "-" : String.format(Locale.ROOT, "%.3f Gbps", g);
    }

    /** Node indices in a why line ("2->3", "pair 0-1") as host names. */
    static String names(Fleet fleet, String why) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\\b(\\d+)(->|-)(\\d+)\\b").matcher(why);
        StringBuilder b = new StringBuilder();
        while (m.find()) {
            int x = Integer.parseInt(m.group(1));
            int y = Integer.parseInt(m.group(3));
            boolean nodes = x < fleet.nodes() && y < fleet.nodes() && (m.group(2).equals("->") || why.startsWith("pair"));
            m.appendReplacement(b, java.util.regex.Matcher.quoteReplacement(nodes
                    ? fleet.hosts().get(x) + m.group(2) + fleet.hosts().get(y) : m.group()));
        }
        m.appendTail(b);
        return b.toString();
    }

    static String json(Fleet fleet, List<LinkResult> links, Judge judge, List<Finding> findings, Map<Integer, String> dead,
            SweepOptions o, double wallSeconds) {
        JsonObject root = new JsonObject();
        root.addProperty("provider", fleet.provider());
        root.addProperty("rails", fleet.rails());
        JsonArray keys = new JsonArray();
        fleet.railKeys().forEach(keys::add);
        root.add("rail_keys", keys);
        root.addProperty("wall_s", wallSeconds);
        JsonObject opts = new JsonObject();
        opts.addProperty("mode", o.quick() > 0 ? "quick" : "tournament");
        opts.addProperty("matchings", o.quick());
        opts.addProperty("size_bytes", o.size());
        opts.addProperty("window", o.window());
        opts.addProperty("seconds", o.seconds().toMillis() / 1e3);
        opts.addProperty("memory", o.memory());
        Thresholds th = judge.thresholds();
        opts.addProperty("line_gbps", th.lineGbps());
        opts.addProperty("line_fraction", th.lineFraction());
        opts.addProperty("reference_fraction", th.referenceFraction());
        opts.addProperty("z_limit", th.zLimit());
        opts.addProperty("latency_factor", th.latencyFactor());
        root.add("options", opts);
        JsonArray nodes = new JsonArray();
        for (int i = 0; i < fleet.nodes(); i++) {
            JsonObject n = new JsonObject();
            n.addProperty("node", i);
            n.addProperty("host", fleet.hosts().get(i));
            n.addProperty("address", fleet.addresses().get(i));
            JsonArray nics = new JsonArray();
            fleet.nics().get(i).forEach(nics::add);
            n.add("nics", nics);
            if (dead.containsKey(i)) {
                n.addProperty("dead", dead.get(i));
            }
            nodes.add(n);
        }
        root.add("nodes", nodes);
        JsonArray medians = new JsonArray();
        for (int k = 0; k < fleet.rails(); k++) {
            JsonObject m = new JsonObject();
            m.addProperty("rail", k);
            m.addProperty("median_gbps", judge.railMedianGbps(k));
            m.addProperty("reference_gbps", judge.railReferenceGbps(k));
            m.addProperty("median_rtt_p50_us", judge.railMedianP50us(k));
            m.addProperty("reference_rtt_p99_us", judge.railTailUs(k));
            medians.add(m);
        }
        root.add("rail_medians", medians);
        JsonArray ls = new JsonArray();
        for (LinkResult l : links) {
            JsonObject j = new JsonObject();
            j.addProperty("a", l.a());
            j.addProperty("b", l.b());
            j.addProperty("rail", l.rail());
            j.addProperty("host_a", fleet.hosts().get(l.a()));
            j.addProperty("host_b", fleet.hosts().get(l.b()));
            j.addProperty("nic_a", fleet.nic(l.a(), l.rail()));
            j.addProperty("nic_b", fleet.nic(l.b(), l.rail()));
            number(j, "gbps_a_to_b", l.gbpsAtoB());
            number(j, "gbps_b_to_a", l.gbpsBtoA());
            number(j, "rtt_p50_us", l.p50us());
            number(j, "rtt_p99_us", l.p99us());
            j.addProperty("failure", l.failure());
            j.addProperty("retest", l.retest());
            j.addProperty("flag", judge.flag(l));
            ls.add(j);
        }
        root.add("links", ls);
        JsonArray fs = new JsonArray();
        for (Finding f : findings) {
            JsonObject j = new JsonObject();
            j.addProperty("kind", f.kind().name());
            j.addProperty("node", f.node());
            if (f.node() >= 0) {
                j.addProperty("host", fleet.hosts().get(f.node()));
            }
            j.addProperty("rail", f.rail());
            if (f.node() >= 0 && f.rail() >= 0) {
                j.addProperty("nic", fleet.nic(f.node(), f.rail()));
            }
            if (f.partner() >= 0) {
                j.addProperty("partner", f.partner());
            }
            number(j, "figure_gbps", f.figure());
            number(j, "reference_gbps", f.reference());
            j.addProperty("why", f.why());
            fs.add(j);
        }
        root.add("findings", fs);
        return new GsonBuilder().setPrettyPrinting().serializeSpecialFloatingPointValues().create().toJson(root) + "\n";
    }

    private static void number(JsonObject j, String key, double v) {
        if (!Double.isNaN(v)) {
            j.addProperty(key, v);
        }
    }

    static String csv(Fleet fleet, List<LinkResult> links, Judge judge) {
        StringBuilder b = new StringBuilder("a,b,rail,host_a,host_b,nic_a,nic_b,gbps_a_to_b,gbps_b_to_a,rtt_p50_us,rtt_p99_us,retest,failure,flag\n");
        for (LinkResult l : links) {
            b.append(l.a()).append(',').append(l.b()).append(',').append(l.rail()).append(',')
                    .append(cell(fleet.hosts().get(l.a()))).append(',').append(cell(fleet.hosts().get(l.b()))).append(',')
                    .append(cell(fleet.nic(l.a(), l.rail()))).append(',').append(cell(fleet.nic(l.b(), l.rail())))
                    .append(',').append(num(l.gbpsAtoB())).append(',').append(num(l.gbpsBtoA())).append(',').append(num(l.p50us()))
                    .append(',').append(num(l.p99us())).append(',').append(l.retest()).append(',').append(cell(l.failure()))
                    .append(',').append(cell(judge.flag(l))).append('\n');
        }
        return b.toString();
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.6g", v);
    }

    private static String cell(String s) {
        if (s == null) {
            return "";
        }
        return s.contains(",") || s.contains("\"") || s.contains("\n") ? "\"" + s.replace("\"", "\"\"") + "\"" : s;
    }

    /** Node x node, each cell the slower direction of the pair's last measurement on rail {@code k}; 0 where unmeasured. */
    static void heatmap(Fleet fleet, List<LinkResult> links, int k, Path file) throws IOException {
        int n = fleet.nodes();
        List<String> names = new ArrayList<>(fleet.hosts());
        double[][] cell = new double[n][n];
        for (double[] row : cell) {
            java.util.Arrays.fill(row, Double.NaN);
        }
        for (LinkResult l : links) {
            if (l.rail() == k) {
                double g = l.measured() ? Math.min(l.gbpsAtoB(), l.gbpsBtoA()) : 0;
                cell[l.a()][l.b()] = g;
                cell[l.b()][l.a()] = g;
            }
        }
        List<Number[]> data = new ArrayList<>();
        double max = 0;
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                if (!Double.isNaN(cell[i][j])) {
                    data.add(new Number[] {i, j, cell[i][j]});
                    max = Math.max(max, cell[i][j]);
                }
            }
        }
        HeatMapChart chart = new HeatMapChartBuilder().width(Math.max(560, 240 + 90 * n)).height(Math.max(420, 200 + 70 * n))
                .title("rail " + k + ": write Gbps, slower direction (0: unreachable)").xAxisTitle("node").yAxisTitle("node").build();
        var st = chart.getStyler();
        st.setShowValue(true);
        st.setHeatMapValueDecimalPattern("0.000");
        st.setHeatMapDecimalValueFormatter(v -> String.format(Locale.ROOT, "%.3f", v));
        st.setValueFont(new java.awt.Font(java.awt.Font.SANS_SERIF, java.awt.Font.PLAIN, 11));
        st.setDecimalPattern("0.000");
        st.setLegendPosition(org.knowm.xchart.style.Styler.LegendPosition.OutsideE);
        st.setGradientColorColumnHeight(Math.max(120, 50 * n));
        st.setRangeColors(new java.awt.Color[] {new java.awt.Color(200, 30, 30), new java.awt.Color(250, 220, 60),
            new java.awt.Color(40, 160, 70)});
        st.setChartBackgroundColor(java.awt.Color.WHITE);
        st.setXAxisLabelRotation(30);
        chart.addSeries("Gbps", names, names, data).setMin(0).setMax(max > 0 ? max : 1);
        BitmapEncoder.saveBitmap(chart, file.toString(), BitmapEncoder.BitmapFormat.PNG);
    }
}
