package io.efabench.launch;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

import io.efabench.rank.RankException;
import io.efabench.report.ReportException;

/**
 * What run-jmh.sh asks Java instead of working it out in bash, so there is one source of truth:
 * bash starts, watches and stops processes. Commands (exit 0; a refusal is one line on stderr and
 * exit 2, or 1 where a run folder could not be made or finished):
 * <ul>
 *   <li>{@code plan local|cluster ARGS...}: what the command does ({@link Plan}: the launcher's
 *       options, the rank as {@code RankEnv} reads it, the JMH runs), in NUL-ended tokens.</li>
 *   <li>{@code start ...}, {@code merge ...}, {@code after ...}, {@code finish ...}: a run folder before and after its
 *       ranks ({@link RunFolder}: name, provenance and each rank's JMH arguments; one folder for a
 *       command's suites; results/latest, the sweep of dead ranks' shm regions, flame graphs and
 *       the report).</li>
 * </ul>
 * What JMH's benchmark list answers is {@link JmhSelection}'s; a run's facts are {@link RunFacts}'.
 */
public final class Launch {
    private Launch() {}

    public static void main(String[] args) {
        try {
            System.exit(run(args));
        } catch (LaunchRefusal e) {
            System.err.println("run-jmh: " + e.getMessage());
            System.exit(e.status);
        } catch (RankException | IllegalArgumentException | ReportException e) {
            System.err.println("run-jmh: " + e.getMessage());
            System.exit(2);
        }
    }

    static int run(String[] args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("usage: Launch plan|start|merge|after|finish ...");
        }
        String[] rest = Arrays.copyOfRange(args, 1, args.length);
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        switch (args[0]) {
            case "plan" -> out.print(tokens(Plan.answer(rest)));
            case "start" -> out.print(tokens(RunFolder.start(rest, System.getenv())));
            case "merge" -> {
                if (rest.length < 3 || rest.length > 4) {
                    throw new IllegalArgumentException("usage: Launch merge INTO FROM TAG [keep]");
                }
                RunFolder.merge(Path.of(rest[0]), Path.of(rest[1]), rest[2], rest.length == 4, System.out);
            }
            case "finish" -> {
                if (rest.length != 3) {
                    throw new IllegalArgumentException("usage: Launch finish RUN_DIR PROFILE REPORT");
                }
                return RunFolder.finish(Path.of(rest[0]), rest[1].equals("yes"), rest[2].equals("yes"), System.out);
            }
            case "after" -> {
                if (rest.length != 6) {
                    throw new IllegalArgumentException("usage: Launch after RUN_DIR MARKER PROFILE REPORT FAILED LEADER");
                }
                return RunFolder.after(Path.of(rest[0]), Path.of(rest[1]), rest[2].equals("yes"), rest[3].equals("yes"),
                        rest[4].equals("yes"), rest[5].equals("yes"), System.out);
            }
            default -> throw new IllegalArgumentException("unknown command '" + args[0] + "' (plan, start, merge, after, finish)");
        }
        out.flush();
        return 0;
    }

    /** Each token ended by a NUL byte, as bash's {@code mapfile -d ''} reads them. */
    static String tokens(List<String> tokens) {
        StringBuilder s = new StringBuilder();
        tokens.forEach(t -> s.append(t).append('\0'));
        return s.toString();
    }
}
