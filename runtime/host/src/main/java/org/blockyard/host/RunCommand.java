package org.blockyard.host;

import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import com.typesafe.config.Config;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Converter;
import org.jline.reader.EndOfFileException;
import org.jline.reader.LineReader;
import org.jline.reader.LineReaderBuilder;
import org.jline.reader.UserInterruptException;
import org.jline.terminal.Terminal;
import org.jline.terminal.TerminalBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import org.blockyard.runtime.config.BlockyardConfig;
import org.blockyard.runtime.io.IoSettings;
import org.blockyard.runtime.volume.Volume;

/**
 * {@code blockyard run}: starts the host (engine and framework) and either runs the shell commands of
 * {@code --exec} and leaves, or gives a shell: a line editor on a terminal, plain lines from a pipe. Leaving
 * ({@code blockyard:shutdown}, end of input, Ctrl-C) stops the framework, then the engine.
 */
@Command(name = "run", mixinStandardHelpOptions = true,
        description = {"Run the engine with an OSGi framework for plugins and a Gogo shell.",
                "Shell: " + BlockyardCommands.SYNOPSIS + " (help blockyard); and Gogo's own, which take bundle"
                        + " ids or names: lb, headers, start, stop, install, update, uninstall, refresh, inspect,"
                        + " which, scr:list, help [COMMAND|SCOPE]."})
public final class RunCommand implements Callable<Integer> {

    @Option(names = "--config", paramLabel = "FILE", description = "Configuration layered over the defaults.")
    Path config;

    @Option(names = "--deploy", paramLabel = "DIR", description = "Folder watched for plugin jars (default: deploy).")
    Path deploy;

    @Option(names = "--exec", paramLabel = "CMDS",
            description = "Shell commands to run (separated by ';'), then stop and leave.")
    String exec;

    @Option(names = "--volume", paramLabel = "IMAGE",
            description = "Run on this durable volume (made by mkfs) instead of blockyard.host.device; it is closed cleanly on the way out.")
    Path volume;

    @Override
    public Integer call() throws Exception {
        // Gogo points System.out at the running session's stream once it starts; sessions must write to
        // the real ones, or a command's output would go round in a circle.
        PrintStream out = System.out, err = System.err;
        if (config != null) org.blockyard.benches.BadOption.config(config); // a bad --config is one line, exit 2
        if (deploy != null && java.nio.file.Files.exists(deploy) && !java.nio.file.Files.isDirectory(deploy))
            throw new org.blockyard.benches.BadOption("--deploy", deploy, "must be a folder (created when missing)");
        Host.Options options = Host.Options.defaults().withConfig(config).withDeploy(deploy);
        Volume[] opened = new Volume[1];
        Host host;
        if (volume == null) {
            host = Host.start(options);
        } else {
            if (!Files.isRegularFile(volume) && !volume.toString().startsWith("/dev/"))
                throw new org.blockyard.benches.BadOption("--volume", volume, "must be a volume made by mkfs");
            Config c = BlockyardConfig.load(config);
            try {
                host = Host.start(options, c, IoSettings.fromConfig(c), io -> {
                    opened[0] = Volume.open(volume, c, io); // its queue with the host's elevators
                    return opened[0].fileStore();
                });
            } catch (RuntimeException e) {
                if (opened[0] != null) opened[0].close();
                throw e;
            }
            host.bench().readOnly("volume", "the host runs on the durable volume " + volume + " (a write would go"
                    + " over its blocks, an allocation around its journal)");
        }
        // The host closes the store (queue, actors); then the volume commits, checkpoints and is marked clean.
        Runnable stop = () -> {
            host.close();
            if (opened[0] != null) opened[0].close();
        };
        Thread hook = new Thread(stop, "blockyard-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return exec != null ? exec(host, exec, out, err) : console(host, out, err);
        } finally {
            stop.run();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException exiting) {
                // the JVM is already shutting down (Ctrl-C): the hook closes the host
            }
        }
    }

    /** Runs {@code script} in one session; 0 when every command ran, 2 when one was refused. */
    static int exec(Host host, String script, PrintStream out, PrintStream err) {
        try (CommandSession session = host.session(new ByteArrayInputStream(new byte[0]), out, err)) {
            // One statement at a time: Gogo hands back only the last statement's value, and some commands
            // (lb) answer with a value rather than printing.
            for (String statement : statements(script)) {
                Object result = session.execute(statement);
                if (result != null) out.println(session.format(result, Converter.INSPECT));
                out.flush();
            }
            return 0;
        } catch (Exception e) {
            report(e, err);
            return 2;
        }
    }

    /**
     * {@code script} split at the {@code ;} and line breaks that end a statement: not those inside quotes or
     * inside {@code {}}, {@code []} or {@code ()} (a Gogo closure or list).
     */
    static java.util.List<String> statements(String script) {
        java.util.List<String> out = new java.util.ArrayList<>();
        StringBuilder cur = new StringBuilder();
        int depth = 0;
        char quote = 0;
        for (int i = 0; i < script.length(); i++) {
            char c = script.charAt(i);
            if (quote != 0) {
                if (c == '\\' && i + 1 < script.length()) cur.append(c).append(script.charAt(++i));
                else {
                    if (c == quote) quote = 0;
                    cur.append(c);
                }
                continue;
            }
            switch (c) {
                case '"', '\'' -> quote = c;
                case '{', '[', '(' -> depth++;
                case '}', ']', ')' -> depth = Math.max(0, depth - 1);
                default -> { }
            }
            if ((c == ';' || c == '\n') && depth == 0) {
                if (!cur.toString().isBlank()) out.add(cur.toString().trim());
                cur.setLength(0);
            } else {
                cur.append(c);
            }
        }
        if (!cur.toString().isBlank()) out.add(cur.toString().trim());
        return out;
    }

    private static int console(Host host, PrintStream out, PrintStream err) throws IOException {
        if (System.console() != null) return terminal(host);
        try (CommandSession session = host.session(System.in, out, err);
             BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while (!host.shutdownRequested() && (line = in.readLine()) != null) run(session, line, out, err);
        }
        return 0;
    }

    private static int terminal(Host host) throws IOException {
        try (Terminal terminal = TerminalBuilder.builder().system(true).build();
             CommandSession session = host.session(terminal.input(), new PrintStream(terminal.output(), true),
                     new PrintStream(terminal.output(), true))) {
            LineReader reader = LineReaderBuilder.builder().terminal(terminal).appName("blockyard").build();
            PrintStream out = new PrintStream(terminal.output(), true);
            out.println("Blockyard host. help blockyard for its commands, lb for the bundles, help for Gogo's;"
                    + " blockyard:shutdown or Ctrl-D to leave.");
            while (!host.shutdownRequested()) {
                String line;
                try {
                    line = reader.readLine("blockyard> ");
                } catch (UserInterruptException | EndOfFileException e) {
                    break;
                }
                run(session, line, out, out);
            }
        }
        return 0;
    }

    private static void run(CommandSession session, String line, PrintStream out, PrintStream err) {
        if (line.isBlank()) return;
        try {
            for (String statement : statements(line)) {
                Object result = session.execute(statement);
                if (result != null) out.println(session.format(result, Converter.INSPECT));
            }
        } catch (Exception e) {
            report(e, err);
        }
        out.flush();
    }

    /** One line: the message of the command's own exception, not of the reflection that called it. */
    private static void report(Throwable e, PrintStream err) {
        Throwable t = e;
        while ((t instanceof java.lang.reflect.InvocationTargetException
                || t instanceof java.lang.reflect.UndeclaredThrowableException) && t.getCause() != null)
            t = t.getCause();
        String message = t.getMessage() != null ? t.getMessage() : t.toString();
        // Gogo's word when no converter knew the argument: say how a bundle or a service is named.
        if (message.startsWith("Cannot coerce ") && message.contains("Bundle"))
            message += " (a bundle is named by its id, symbolic name or location, as lb lists them)";
        else if (message.startsWith("Cannot coerce ") && message.contains("ServiceReference"))
            message += " (a service is named by its service.id or service.pid)";
        err.println("blockyard: " + message);
        if ("1".equals(System.getenv("BLOCKYARD_STACKTRACE"))) t.printStackTrace(err);
        err.flush();
    }
}
