package io.efabench.launch;

import java.io.FileNotFoundException;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.results.BenchmarkResult;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.results.format.ResultFormatFactory;
import org.openjdk.jmh.results.format.ResultFormatType;
import org.openjdk.jmh.runner.Defaults;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.format.OutputFormat;
import org.openjdk.jmh.runner.format.OutputFormatFactory;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.VerboseMode;
import org.openjdk.jmh.util.UnCloseablePrintStream;
import org.openjdk.jmh.util.Utils;

import io.efabench.fabric.CallBoard;
import io.efabench.rank.RankException;
import io.efabench.rank.RankGroup;

/**
 * The jar's main class: JMH's {@code Main}, with these differences.
 * <ul>
 *   <li>This JVM watches the call board its forks report into (see {@link CallBoard}), so a fork
 *       stuck inside a libfabric call is killed by a process that has no stuck thread.</li>
 *   <li>A run that stops on a failed trial ({@code -foe true}, what run-jmh.sh passes) still
 *       writes the trials that finished before it to the result file, as JMH would have at the
 *       end; the exit code stays non-zero. JMH writes none in that case.</li>
 *   <li>So does a run ended by a signal (TERM, INT), from a shutdown hook.</li>
 *   <li>A run without {@code -foe true}, where JMH goes on past a failed trial and writes the
 *       others' results, exits 1 with a line naming the failed trials (JMH exits 0), so a job
 *       script or Slurm sees the failure.</li>
 * </ul>
 * Listing, help and every option are JMH's own.
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) throws Exception {
        CommandLineOptions options;
        try {
            options = new CommandLineOptions(args);
        } catch (CommandLineOptionException e) {
            System.err.println("Error parsing command line:");
            System.err.println(" " + e.getMessage());
            System.exit(2);
            return;
        }
        if (options.shouldHelp() || options.shouldList() || options.shouldListWithParams()
                || options.shouldListProfilers() || options.shouldListResultFormats()) {
            org.openjdk.jmh.Main.main(args);
            return;
        }
        CallBoard.watchFromHere(timeout());
        if (options.getForkCount().orElse(-1) == 0 && System.getenv("MALLOC_ARENA_MAX") == null) {
            System.err.println("# efabench: -f 0 runs every trial in this JVM, and glibc keeps what a trial frees in"
                    + " malloc arenas the next one does not use (RSS grows by tens of MB per trial): set"
                    + " MALLOC_ARENA_MAX=2, as run-jmh.sh does");
        }
        FinishedTrials finished = new FinishedTrials(jmhOutput(options));
        // A signal (Slurm's time limit, Ctrl-C, run-jmh.sh stopping the ranks) ends the JVM
        // before JMH writes its results: the hook writes the trials that finished.
        Thread onSignal = new Thread(() -> finished.writeTo(options, "was stopped by a signal"), "efabench-finished-trials");
        Runtime.getRuntime().addShutdownHook(onSignal);
        try {
            new Runner(options, finished).run();
            Runtime.getRuntime().removeShutdownHook(onSignal);
            List<BenchmarkParams> failed = finished.failed();
            if (!failed.isEmpty()) {
                System.err.println("ERROR: " + failed.size() + " trial(s) failed (JMH went on past them; -foe true stops"
                        + " at the first): " + String.join("; ", failed.stream().map(Main::trialName).toList()));
                System.exit(1);
            }
        } catch (RunnerException e) {
            Runtime.getRuntime().removeShutdownHook(onSignal);
            finished.writeTo(options, "stopped on a failed trial");
            System.err.println(describe(e));
            System.exit(1);
        }
    }

    /**
     * JMH's exception as lines without stack frames: JMH already printed the failed trial's own
     * exception where it happened, and a trace of JMH's runner and this class says nothing more.
     */
    static String describe(Throwable e) {
        StringBuilder b = new StringBuilder("ERROR: ").append(e);
        for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
            b.append("\n  caused by ").append(c);
            for (Throwable s : c.getSuppressed()) {
                b.append("\n    ").append(s);
            }
        }
        return b.toString();
    }

    /** "WriteBenchmark.write (config=SinglePin, size=64K)": a trial as a user names it. */
    static String trialName(BenchmarkParams p) {
        String name = p.getBenchmark();
        int cls = name.lastIndexOf('.', name.lastIndexOf('.') - 1);
        List<String> params = new ArrayList<>();
        for (String key : p.getParamsKeys()) {
            params.add(key + "=" + p.getParam(key));
        }
        return name.substring(cls + 1) + (params.isEmpty() ? "" : " (" + String.join(", ", params) + ")");
    }

    private static Duration timeout() {
        try {
            return RankGroup.defaultTimeout();
        } catch (RankException badValue) {
            return Duration.ofSeconds(60); // the trial reports the bad value in its own words
        }
    }

    /** The output JMH's {@code Runner(Options)} would make: {@code -o FILE} or stdout, at {@code -v}. */
    private static OutputFormat jmhOutput(CommandLineOptions options) throws FileNotFoundException {
        PrintStream out;
        try {
            out = options.getOutput().hasValue() ? new PrintStream(options.getOutput().get())
                    : new UnCloseablePrintStream(System.out, Utils.guessConsoleEncoding());
        } catch (java.io.UnsupportedEncodingException e) {
            throw new IllegalStateException(e);
        }
        VerboseMode verbosity = options.verbosity().orElse(Defaults.VERBOSITY);
        return OutputFormatFactory.createFormatInstance(out, verbosity);
    }

    /** JMH's output, keeping every trial that ended with a result. */
    static final class FinishedTrials implements OutputFormat {
        private final OutputFormat out;
        private final Map<BenchmarkParams, List<BenchmarkResult>> results = new LinkedHashMap<>();
        /** Trials that ended without a result (JMH ends a failed one with null) or never ended. */
        private final List<BenchmarkParams> failed = new ArrayList<>();
        private BenchmarkParams open;

        FinishedTrials(OutputFormat out) {
            this.out = out;
        }

        /**
         * After a run that {@code ended} early: the finished trials go where JMH writes its results
         * ({@code -rff}, else {@code jmh-result.<format>}), with a line saying how many. Nothing
         * when none finished. Synchronized: a signal's hook runs beside the runner's thread.
         */
        synchronized void writeTo(CommandLineOptions options, String ended) {
            if (results.isEmpty()) {
                return;
            }
            ResultFormatType type = options.getResultFormat().orElse(Defaults.RESULT_FORMAT);
            String file = options.getResult().orElse(Defaults.RESULT_FILE_PREFIX + "." + type.toString().toLowerCase());
            Collection<RunResult> runs = new ArrayList<>();
            results.forEach((params, list) -> runs.add(new RunResult(params, list)));
            ResultFormatFactory.getInstance(type, file).writeOut(runs);
            System.err.println("# efabench: the run " + ended + "; the " + runs.size()
                    + " trial(s) that finished before it are in " + file);
        }

        /** The trials that failed, once the run is over. */
        synchronized List<BenchmarkParams> failed() {
            List<BenchmarkParams> all = new ArrayList<>(failed);
            if (open != null) {
                all.add(open);
            }
            return all;
        }

        @Override
        public void endBenchmark(BenchmarkResult result) {
            synchronized (this) {
                if (result == null && open != null) {
                    failed.add(open);
                }
                open = null;
            }
            if (result != null) {
                synchronized (this) {
                    results.computeIfAbsent(result.getParams(), p -> new ArrayList<>()).add(result);
                }
            }
            out.endBenchmark(result);
        }

        @Override
        public void iteration(BenchmarkParams bp, IterationParams ip, int i) {
            out.iteration(bp, ip, i);
        }

        @Override
        public void iterationResult(BenchmarkParams bp, IterationParams ip, int i, IterationResult r) {
            out.iterationResult(bp, ip, i, r);
        }

        @Override
        public void startBenchmark(BenchmarkParams bp) {
            synchronized (this) {
                if (open != null) {
                    failed.add(open);
                }
                open = bp;
            }
            out.startBenchmark(bp);
        }

        @Override
        public void startRun() {
            out.startRun();
        }

        @Override
        public void endRun(Collection<RunResult> runs) {
            out.endRun(runs);
        }

        @Override
        public void print(String s) {
            out.print(s);
        }

        @Override
        public void println(String s) {
            out.println(s);
        }

        @Override
        public void flush() {
            out.flush();
        }

        @Override
        public void close() {
            out.close();
        }

        @Override
        public void verbosePrintln(String s) {
            out.verbosePrintln(s);
        }

        @Override
        public void write(int b) {
            out.write(b);
        }

        @Override
        public void write(byte[] b) throws java.io.IOException {
            out.write(b);
        }
    }
}
