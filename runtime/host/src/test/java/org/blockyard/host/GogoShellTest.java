package org.blockyard.host;

import static org.blockyard.host.HostFixture.await;
import static org.blockyard.host.HostFixture.drop;
import static org.blockyard.host.HostFixture.fifoJar;
import static org.blockyard.host.HostFixture.rewrite;
import static org.blockyard.host.HostFixture.shell;
import static org.blockyard.host.HostFixture.shellQuietly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;

/**
 * Gogo as a Felix user knows it, in the real host and its real Gogo sessions: gogo.command's commands take
 * bundle ids and names, {@code refresh} refreshes, {@code help blockyard} lists the host's commands, and a
 * jar that cannot resolve is one line on the console, its stack trace in {@code blockyard:log}.
 */
class GogoShellTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private Host host;

    @AfterEach
    void closeHost() throws InterruptedException {
        if (host != null) host.close();
        HostFixture.assertNoThreadsLeft();
    }

    private Bundle bundle(String symbolicName) {
        for (Bundle b : host.framework().getBundleContext().getBundles())
            if (symbolicName.equals(b.getSymbolicName())) return b;
        return null;
    }

    private String listing() {
        return shellQuietly(host, "blockyard:scheduler").trim();
    }

    private long count(String text) {
        return host.noticeLines().stream().filter(l -> l.contains(text)).count();
    }

    @Test
    void gogosBundleCommandsTakeBundleIdsAndSymbolicNames() throws Exception {
        host = HostFixture.start(tmp, Path.of("target", "plugins"), null);
        long fifo = bundle("org.blockyard.plugin.fifo").getBundleId();

        String byId = shell(host, "headers " + fifo);
        assertTrue(byId.contains("Bundle-SymbolicName = org.blockyard.plugin.fifo"), byId);
        assertEquals(byId, shell(host, "headers org.blockyard.plugin.fifo"), "by symbolic name as by id");
        String which = shell(host, "which " + fifo + " org.blockyard.plugin.fifo.FifoElevatorFactory");
        assertTrue(which.contains("Loaded from: org.blockyard.plugin.fifo [" + fifo + "]"), which);
        String caps = shell(host, "inspect cap osgi.service 0");
        assertTrue(caps.contains("org.apache.felix.framework [0] provides:"), caps);
        String services = shell(host, "inspect cap service 0");
        assertTrue(services.contains("org.blockyard.host.BlockyardCommands"), services);
        String offered = shell(host, "inspect cap service " + fifo);
        assertTrue(offered.contains("org.blockyard.api.io.ElevatorFactory"), offered);
        // A bundle as a value prints as lb prints it.
        String bundles = shell(host, "$.context bundles");
        assertTrue(bundles.lines().anyMatch(l -> l.matches("\\s*" + fifo + "\\|Active\\s*\\|\\s*1\\|org\\.blockyard\\.plugin\\.fifo \\(.*\\)")),
                bundles);

        shell(host, "stop " + fifo);
        await("fifo stopped", WAIT, () -> !listing().contains("fifo"));
        shell(host, "start " + fifo);
        await("fifo started", WAIT, () -> listing().contains("fifo"));

        Path next = rewrite(fifoJar(), tmp.resolve("fifo-next.jar"), "Bundle-Version", "0.1.1");
        shell(host, "update " + fifo + " " + next.toUri());
        await("fifo updated", WAIT, () -> "0.1.1".equals(bundle("org.blockyard.plugin.fifo").getVersion().toString()));
        await("fifo back after the update", WAIT, () -> listing().contains("fifo"));

        // refresh: everything pending, or the bundles named (which restarts them); it waits until done.
        shell(host, "refresh");
        long available = count("io scheduler fifo available");
        shell(host, "refresh " + fifo);
        assertEquals(Bundle.ACTIVE, bundle("org.blockyard.plugin.fifo").getState(), "refreshed and started again");
        await("fifo offered again after the refresh", WAIT, () -> count("io scheduler fifo available") > available);

        shell(host, "uninstall org.blockyard.plugin.fifo");
        assertEquals(null, bundle("org.blockyard.plugin.fifo"));
        await("fifo gone", WAIT, () -> !listing().contains("fifo"));

        // A bundle nobody has: Gogo's own refusal, with how bundles are named.
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        int code = RunCommand.exec(host, "headers 999", new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        assertEquals(2, code);
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("a bundle is named by its id, symbolic name or location"),
                err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void helpOfAScopeListsItsCommandsAndRunHelpNamesEveryBlockyardCommand() throws Exception {
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), null);
        String help = shell(host, "help blockyard");
        for (String f : BlockyardCommands.FUNCTIONS)
            assertTrue(help.contains("blockyard:" + f), () -> f + " missing from\n" + help);
        assertTrue(help.contains("blockyard:tunables NAME KEY VALUE - set tunable KEY"), help);
        assertFalse(help.contains("felix:"), help);
        String felix = shell(host, "help felix");
        assertTrue(felix.contains("felix:headers <target bundles>... - display bundle headers"), felix);
        // gogo.command's help for everything else.
        assertTrue(shell(host, "help").contains("blockyard:policy"));
        String one = shell(host, "help scheduler");
        assertTrue(one.contains("scope: blockyard") && one.contains("NAME, an io scheduler's id or alias"), one);
        assertTrue(shell(host, "help nope").contains("No methods found matching: nope"));

        String usage = new picocli.CommandLine(new RunCommand()).getUsageMessage();
        for (String f : BlockyardCommands.FUNCTIONS)
            assertTrue(usage.replaceAll("\\s+", " ").contains("blockyard:" + f), () -> f + " missing from\n" + usage);
    }

    @Test
    void aJarThatCannotResolveIsOneLineOnTheConsoleNamingTheRealFolderAndItsTraceIsInTheLog() throws Exception {
        Path folder = tmp.resolve("drop-here");
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        PrintStream realOut = System.out, realErr = System.err;
        PrintStream both = new PrintStream(console, true, StandardCharsets.UTF_8);
        String log;
        try {
            // Before the host starts: Gogo keeps the streams it finds for every thread that is not a session's.
            System.setOut(both);
            System.setErr(both);
            host = Host.start(Host.Options.defaults().withDeploy(folder).withStorage(tmp.resolve("cache"))
                    .withPlugins(Path.of("target", "plugins")).withPoll(Duration.ofMillis(100)));

            drop(rewrite(fifoJar(), tmp.resolve("bad.jar"), "Bundle-SymbolicName", "org.blockyard.plugin.bad",
                    "Import-Package", "org.blockyard.api.io;version=\"[9,10)\""), folder, "bad.jar");
            await("the cannot-start notice", WAIT, () -> count("cannot start") == 1);
            // Later changes of the folder: FileInstall tries the bad bundle again at each.
            for (String twin : List.of("twin1", "twin2")) {
                drop(rewrite(fifoJar(), tmp.resolve(twin + ".jar"), "Bundle-SymbolicName", "org.blockyard.plugin." + twin),
                        folder, twin + ".jar");
                await(twin + " refused", WAIT, () -> count("org.blockyard.plugin." + twin) > 0);
            }
            Manifest plain = new Manifest();
            plain.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
            try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(tmp.resolve("plain.jar")), plain)) {
                j.putNextEntry(new java.util.jar.JarEntry("readme.txt"));
                j.write("not a bundle".getBytes(StandardCharsets.UTF_8));
            }
            drop(tmp.resolve("plain.jar"), folder, "plain.jar");
            await("the not-a-bundle notice", WAIT, () -> count("is not an OSGi bundle") == 1);
            Files.delete(folder.resolve("twin1.jar"));
            await("twin1 gone", WAIT, () -> bundle("org.blockyard.plugin.twin1") == null);
            Thread.sleep(1000); // ten of FileInstall's polls, for any late retry to show
            log = shell(host, "blockyard:log");
            host.close();
        } finally {
            System.setOut(realOut);
            System.setErr(realErr);
        }
        String said = console.toString(StandardCharsets.UTF_8);
        List<String> bad = said.lines().filter(l -> l.contains("bad.jar")).toList();
        assertEquals(1, bad.size(), () -> "one line about bad.jar on the console:\n" + said);
        assertTrue(bad.get(0).contains(folder.resolve("bad.jar").toString()) && bad.get(0).contains("cannot start")
                && bad.get(0).contains("nothing provides") && bad.get(0).contains("org.blockyard.api.io"), bad.get(0));
        assertFalse(said.contains("\tat ") || said.contains("Error while starting bundle"), () -> "no trace:\n" + said);
        assertTrue(said.contains(folder.resolve("plain.jar") + " is not an OSGi bundle"), said);

        // The trace is in the host's log, once however often FileInstall retried.
        assertEquals(1, count("Error while starting bundle"), () -> String.join("\n", host.noticeLines()));
        String trace = host.noticeLines().stream().filter(l -> l.contains("Error while starting bundle")).findFirst()
                .orElseThrow();
        assertTrue(trace.contains("bad.jar") && trace.contains("org.osgi.framework.BundleException: Unable to resolve")
                && trace.contains("\tat org.apache.felix.framework.Felix"), trace);
        assertTrue(log.contains("Unable to resolve org.blockyard.plugin.bad") && log.contains("cannot start"), log);
    }
}
