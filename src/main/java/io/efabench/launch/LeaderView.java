package io.efabench.launch;

import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the terminal shows of a run, so run-jmh.sh only pipes and starts: rank 0's JMH output as it
 * comes, with a progress line before every fork ("[3/28] WriteBenchmark.write config=MultiPin
 * size=1M  ETA 00:02:10": the total from {@link Launch#forks}, JMH's own count, the ETA JMH's own)
 * and stack frames folded into one line (the whole output stays in the rank's log); and, for a
 * rank that failed, the one-line reasons from its log. Commands:
 * <ul>
 *   <li>{@code view LOG_NAME JMH_ARGS...}: filters standard input to standard output, line by
 *       line, flushed as it goes; LOG_NAME is where the full output is, for the folded frames.</li>
 *   <li>{@code why LOG}: a failed rank's reasons, one per line: efabench's own "efabench: " lines
 *       (the last 8, each once); else exception messages (not JMH's wrappers, not frames; the last
 *       5); else the log's last 5 lines that are neither blank nor frames.</li>
 * </ul>
 */
public final class LeaderView {
    private static final Pattern FRAME = Pattern.compile("^\\s+(at |\\.\\.\\. \\d+ more)");
    private static final Pattern ETA = Pattern.compile("ETA (.*)$");
    private static final Pattern FORK = Pattern.compile("(\\d+) of (\\d+)");
    private static final Pattern EXCEPTION = Pattern.compile(
            "^(\\s*(Caused by|Suppressed): )?[A-Za-z_$][A-Za-z0-9_$.]*(Exception|Error)(: .*)?$");
    private static final Pattern EXCEPTION_PREFIX = Pattern.compile("^\\s*((Caused by|Suppressed): )?");

    private final PrintStream out;
    private final String logName;
    private final String total;
    private String bench = "";
    private String params = "";
    private String eta = "";
    private int forks;
    private int frames;
    /** A trial failed with an "efabench: " line: JMH's error block that repeats it is left to the log. */
    private boolean explained;

    LeaderView(PrintStream out, String logName, String total) {
        this.out = out;
        this.logName = logName;
        this.total = total;
    }

    public static void main(String[] args) throws IOException {
        if (args.length >= 2 && args[0].equals("view")) {
            String total;
            try {
                total = Long.toString(JmhSelection.forks(Arrays.copyOfRange(args, 2, args.length)));
            } catch (RuntimeException e) {
                total = "?"; // JMH will say what is wrong with its arguments itself
            }
            PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
            new LeaderView(out, args[1], total).filter(new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)));
        } else if (args.length == 2 && args[0].equals("why")) {
            // ISO-8859-1 both ways: the log's bytes come back as they were, whatever their encoding.
            PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.ISO_8859_1);
            failureLines(Path.of(args[1])).forEach(out::println);
        } else {
            System.err.println("run-jmh: usage: LeaderView view LOG_NAME JMH_ARGS... | why LOG");
            System.exit(2);
        }
    }

    /** Shows every line of {@code in} as it comes, until its end. */
    void filter(BufferedReader in) throws IOException {
        for (String line; (line = in.readLine()) != null; ) {
            line(line);
        }
        foldFrames();
        out.flush();
    }

    void line(String line) {
        if (FRAME.matcher(line).find()) {
            if (!explained) {
                frames++;
            }
            return;
        }
        foldFrames();
        if (line.startsWith("efabench:")) {
            explained = true;
        } else if (line.startsWith("# ")) {
            explained = false;
        } else if (explained && jmhRepeatsTheFailure(line)) {
            return;
        }
        out.println(line);
        if (line.startsWith("# Benchmark: ")) {
            String full = line.substring("# Benchmark: ".length());
            String cls = full.substring(0, Math.max(0, full.lastIndexOf('.')));
            bench = cls.substring(cls.lastIndexOf('.') + 1) + "." + full.substring(full.lastIndexOf('.') + 1);
            params = "";
        } else if (line.startsWith("# Parameters: ")) {
            String p = line.substring("# Parameters: ".length());
            p = p.startsWith("(") ? p.substring(1) : p;
            p = p.endsWith(")") ? p.substring(0, p.length() - 1) : p;
            params = p.replace(" = ", "=").replace(", ", " ");
        } else if (line.startsWith("# Run progress: ")) {
            Matcher m = ETA.matcher(line);
            if (m.find()) {
                eta = m.group(1);
            }
        } else if (line.startsWith("# Fork: ") || line.startsWith("# Warmup Fork: ")) {
            forks++;
            String fork = "";
            Matcher m = FORK.matcher(line);
            if (m.find() && Integer.parseInt(m.group(2)) > 1) {
                fork = "  fork " + m.group(1) + "/" + m.group(2);
            }
            if (line.startsWith("# Warmup Fork: ")) {
                fork = "  warmup" + (fork.isEmpty() ? "  fork" : fork);
            }
            out.println("[" + forks + "/" + total + "] " + bench + (params.isEmpty() ? "" : " " + params) + fork + "  ETA " + eta);
        }
    }

    private static boolean jmhRepeatsTheFailure(String line) {
        return line.equals("Benchmark had encountered error, and fail on error was requested")
                || line.startsWith("ERROR: org.openjdk.jmh.runner.") || line.startsWith("Caused by: org.openjdk.jmh.runner.")
                || line.stripLeading().startsWith("Suppressed: efabench: ");
    }

    private void foldFrames() {
        if (frames > 0) {
            out.println("\t... " + frames + " stack lines (full trace in " + logName + ")");
            frames = 0;
        }
    }

    /** A failed rank's one-line reasons from its log (see the class comment). */
    static List<String> failureLines(Path log) throws IOException {
        if (!Files.isRegularFile(log)) {
            return List.of("(no log at " + log + ")");
        }
        List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1); // bytes as they are
        LinkedHashSet<String> ours = new LinkedHashSet<>();
        for (String l : lines) {
            int at = l.indexOf("efabench: ");
            // "# efabench: ..." lines (also after JMH's "Iteration   1: ") are information, not reasons.
            if (at >= 0 && !l.startsWith("# ") && !l.contains("# efabench: ")) {
                ours.add(l.substring(at));
            }
        }
        if (!ours.isEmpty()) {
            return last(new ArrayList<>(ours), 8);
        }
        LinkedHashSet<String> exceptions = new LinkedHashSet<>();
        for (String l : lines) {
            if (EXCEPTION.matcher(l).matches() && !l.contains("org.openjdk.jmh.runner.") && !l.startsWith("ERROR: ")) {
                exceptions.add(EXCEPTION_PREFIX.matcher(l).replaceFirst(""));
            }
        }
        if (!exceptions.isEmpty()) {
            return last(new ArrayList<>(exceptions), 5);
        }
        return last(lines.stream().filter(l -> !l.isBlank() && !FRAME.matcher(l).find()).toList(), 5);
    }

    private static List<String> last(List<String> lines, int n) {
        return lines.subList(Math.max(0, lines.size() - n), lines.size());
    }
}
