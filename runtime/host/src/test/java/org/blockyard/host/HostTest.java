package org.blockyard.host;

import static org.blockyard.host.HostFixture.await;
import static org.blockyard.host.HostFixture.drop;
import static org.blockyard.host.HostFixture.fifoJar;
import static org.blockyard.host.HostFixture.rewrite;
import static org.blockyard.host.HostFixture.shell;
import static org.blockyard.host.HostFixture.shellQuietly;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import org.blockyard.api.alloc.AllocationPolicyFactory;
import org.blockyard.api.io.Elevator;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorFactory;
import org.blockyard.api.io.IoRequest;
import org.blockyard.api.io.QueueLimits;
import org.blockyard.runtime.volume.Fsck;
import org.blockyard.runtime.volume.Layout;
import org.blockyard.runtime.volume.Volume;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;

/** A real Felix with the real bundles: install, select, update and uninstall a plugin while requests run. */
class HostTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path tmp;

    private Host host;

    @AfterEach
    void closeHost() throws InterruptedException {
        if (host != null) host.close();
        HostFixture.assertNoThreadsLeft();
    }

    private String listing() {
        return shellQuietly(host, "blockyard:scheduler").trim();
    }

    private Bundle fifoBundle() {
        for (Bundle b : host.framework().getBundleContext().getBundles())
            if ("org.blockyard.plugin.fifo".equals(b.getSymbolicName())) return b;
        return null;
    }

    @Test
    void aPluginDroppedInTheDeployFolderCanBeSelectedUpdatedAndRemovedWhileRequestsRunAndNoneIsLost() throws Exception {
        // Not about stalls: a collection inside one of the plugin's calls, with thousands of requests queued on
        // two busy cores, must not retire it (as the engine's queue tests, ActorQueueHarness).
        Path config = Files.writeString(tmp.resolve("patient.conf"), "blockyard.io.elevator-stall-limit = 30s\n");
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), config);
        Path deploy = tmp.resolve("deploy");
        assertEquals("noop [deadline]", listing());

        drop(fifoJar(), deploy, "fifo.jar");
        await("fifo in the listing", WAIT, () -> listing().contains("fifo"));
        assertEquals("noop deadline [fifo]", shell(host, "blockyard:scheduler fifo").lines().findFirst().orElseThrow());

        // Load: asynchronous writes with payloads, several in flight, each counted when it completes.
        AtomicLong submitted = new AtomicLong(), completed = new AtomicLong(), failed = new AtomicLong();
        AtomicBoolean run = new AtomicBoolean(true);
        List<CompletableFuture<?>> all = java.util.Collections.synchronizedList(new ArrayList<>());
        var queue = host.store().queue();
        Thread load = new Thread(() -> {
            long id = 1;
            while (run.get()) {
                List<IoRequest> batch = new ArrayList<>();
                for (int i = 0; i < 16; i++, id++) // scattered 4 KiB writes: the elevator has work to order
                    batch.add(IoRequest.write(id, (id * 7919 % 100_000) * 8, 8, id % 4)
                            .withPayload(ByteBuffer.allocate(4096)));
                for (var stage : queue.submitAll(batch)) {
                    submitted.incrementAndGet();
                    all.add(stage.toCompletableFuture().whenComplete((c, e) -> {
                        if (e == null) completed.incrementAndGet();
                        else failed.incrementAndGet();
                    }));
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "test-load");
        load.start();
        await("load under fifo", WAIT, () -> completed.get() > 500);

        // Update: a new jar of the same bundle under the same name.
        String before = fifoBundle().getVersion().toString();
        drop(rewrite(fifoJar(), tmp.resolve("fifo-next.jar"), "Bundle-Version", "0.1.1"), deploy, "fifo.jar");
        await("the updated fifo bundle", WAIT, () -> fifoBundle() != null && fifoBundle().getVersion().toString().equals("0.1.1"));
        await("fifo selected again after the update", WAIT, () -> listing().equals("noop deadline [fifo]"));
        assertTrue(!before.equals("0.1.1"));
        long afterUpdate = completed.get();
        await("load under the updated fifo", WAIT, () -> completed.get() > afterUpdate + 500);

        // Uninstall the active one: the queue falls back to the default and says so.
        Files.delete(deploy.resolve("fifo.jar"));
        await("fifo gone", WAIT, () -> listing().equals("noop [deadline]"));
        assertTrue(host.noticeLines().stream().anyMatch(l -> l.contains("fifo went away")
                && l.contains("falls back to its default")), () -> String.join("\n", host.noticeLines()));
        long afterRemove = completed.get();
        await("load under the default", WAIT, () -> completed.get() > afterRemove + 500);

        run.set(false);
        load.join();
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);
        assertEquals(0, failed.get(), "failed requests");
        assertEquals(submitted.get(), completed.get(), "every submitted request completed exactly once");
        String stats = shell(host, "blockyard:stats");
        assertTrue(stats.contains("completed"), stats);
    }

    /**
     * While FileInstall updates a plugin and the framework refreshes it, on two threads, the plugin's next
     * service may arrive before the old one leaves. The newer replaces the older, and the older's departure
     * must not take the elevator away (before, the newer was refused as a clash and the elevator was gone).
     */
    @Test
    void aNewerServiceOfTheSamePluginReplacesTheOlderAndTheOldersDepartureChangesNothing() throws Exception {
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), null);
        drop(fifoJar(), tmp.resolve("deploy"), "fifo.jar");
        await("fifo in the listing", WAIT, () -> listing().contains("fifo"));
        BundleContext framework = host.framework().getBundleContext();
        ElevatorFactory fifo = framework.getService(framework.getServiceReference(ElevatorFactory.class));
        BundleContext plugin = fifoBundle().getBundleContext(); // the same bundle offers both, as its revisions do
        ServiceRegistration<ElevatorFactory> older = plugin.registerService(ElevatorFactory.class, renamed(fifo), null);
        await("the older in the listing", WAIT, () -> listing().contains("fifo-next"));
        assertEquals("noop deadline fifo [fifo-next]",
                shell(host, "blockyard:scheduler fifo-next").lines().findFirst().orElseThrow());

        // The tracker's callbacks run inside these calls; the queue hears of them by message, in order.
        ServiceRegistration<ElevatorFactory> newer = plugin.registerService(ElevatorFactory.class, renamed(fifo), null);
        older.unregister();
        await("fifo-next selected again", WAIT, () -> listing().equals("noop deadline fifo [fifo-next]"));
        for (int i = 0; i < 10; i++) { // and it stays so: a late unregister would land within this
            Thread.sleep(50);
            assertEquals("noop deadline fifo [fifo-next]", listing(), () -> String.join("\n", host.noticeLines()));
        }
        assertTrue(host.noticeLines().stream().anyMatch(l -> l.contains("fifo-next available")
                && l.contains("in place of")), () -> String.join("\n", host.noticeLines()));
        assertTrue(host.noticeLines().stream().anyMatch(l -> l.contains("fifo-next")
                && l.contains("already replaced")), () -> String.join("\n", host.noticeLines()));
        newer.unregister();
        await("fifo-next gone, the default active", WAIT, () -> listing().equals("noop [deadline] fifo"));
    }

    /** {@code real} under the id {@code fifo-next}. */
    private static ElevatorFactory renamed(ElevatorFactory real) {
        ElevatorDescriptor d = real.descriptor();
        ElevatorDescriptor next = new ElevatorDescriptor("fifo-next", List.of(), d.description(), d.tunables());
        return new ElevatorFactory() {
            @Override
            public ElevatorDescriptor descriptor() {
                return next;
            }

            @Override
            public Elevator create(QueueLimits limits, Map<String, Long> tunables) {
                return real.create(limits, tunables);
            }
        };
    }

    @Test
    void aSelectedNameThatIsNotInstalledFallsBackAndBecomesActiveWhenItsPluginArrives() throws Exception {
        Path config = Files.writeString(tmp.resolve("fifo.conf"), "blockyard.io.scheduler = fifo\n");
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), config);
        assertEquals("noop [deadline]", listing());

        drop(fifoJar(), tmp.resolve("deploy"), "fifo.jar");
        await("fifo active once it arrives", WAIT, () -> listing().equals("noop deadline [fifo]"));
    }

    @Test
    void elevatorAsFallsBackToTheDefaultWithoutTheAnticipatoryBundleAndSelectsItWhenPresent() throws Exception {
        Path config = Files.writeString(tmp.resolve("as.conf"), "blockyard.io.scheduler = as\n");
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), config);
        assertEquals("noop [deadline]", listing());
        host.close();
        host = HostFixture.start(tmp, Path.of("target", "plugins"), config);
        await("anticipatory active once its bundle is up", WAIT,
                () -> listing().equals("noop deadline [anticipatory] cfq fifo"));
    }

    @Test
    void anticipatoryAndCfqAreSelectedByNameOrAliasAndRefuseABadTunableKeepingTheOldValue() throws Exception {
        host = HostFixture.start(tmp, Path.of("target", "plugins"), null);
        assertEquals("noop [deadline] anticipatory cfq fifo", listing());
        assertEquals("noop deadline [anticipatory] cfq fifo",
                shell(host, "blockyard:scheduler as").lines().findFirst().orElseThrow());
        Exception range = assertThrows(Exception.class,
                () -> shell(host, "blockyard:tunables anticipatory antic_expire 5000"));
        assertTrue(range.getMessage().contains("anticipatory.antic_expire = 5000 is outside [0, 1000] ms; nothing changed"),
                range.getMessage());
        String shown = shell(host, "blockyard:tunables as");
        assertTrue(shown.matches("(?s).*antic_expire\\s+6\\s+6\\s+\\[0, 1000\\]\\s+ms.*"), shown);
        shell(host, "blockyard:tunables anticipatory antic_expire 0");
        assertTrue(shell(host, "blockyard:tunables as").matches("(?s).*antic_expire\\s+0\\s+6.*"));
        assertEquals("noop deadline anticipatory [cfq] fifo",
                shell(host, "blockyard:scheduler cfq").lines().findFirst().orElseThrow());
        Exception idle = assertThrows(Exception.class, () -> shell(host, "blockyard:tunables cfq slice_idle -1"));
        assertTrue(idle.getMessage().contains("cfq.slice_idle = -1 is outside [0, 1000] ms"), idle.getMessage());
        assertEquals("noop deadline anticipatory [cfq] fifo", listing());
    }

    @Test
    void refusedCommandsAndBadJarsSayWhyAndChangeNothing() throws Exception {
        host = HostFixture.start(tmp, Path.of("target", "plugins"), null);
        Path deploy = tmp.resolve("deploy");
        assertEquals("noop [deadline] anticipatory cfq fifo", listing());
        int bundles = host.framework().getBundleContext().getBundles().length;

        Exception unknown = assertThrows(Exception.class, () -> shell(host, "blockyard:scheduler nope"));
        assertTrue(unknown.getMessage().contains("no io scheduler 'nope' is installed"), unknown.getMessage());
        Exception range = assertThrows(Exception.class, () -> shell(host, "blockyard:tunables fifo front_merges 2"));
        assertTrue(range.getMessage().contains("outside [0, 1]"), range.getMessage());
        Exception type = assertThrows(Exception.class, () -> shell(host, "blockyard:tunables fifo front_merges yes"));
        assertTrue(type.getMessage().contains("not a whole number"), type.getMessage());
        String shown = shell(host, "blockyard:tunables fifo");
        assertTrue(shown.matches("(?s).*front_merges\\s+0\\s+0\\s+\\[0, 1\\]\\s+bool.*"), shown);
        assertEquals("noop [deadline] anticipatory cfq fifo", listing());

        // A jar that is not a bundle.
        Manifest plain = new Manifest();
        plain.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        try (JarOutputStream j = new JarOutputStream(Files.newOutputStream(tmp.resolve("plain.jar")), plain)) {
            j.putNextEntry(new java.util.jar.JarEntry("readme.txt"));
            j.write("not a bundle".getBytes(StandardCharsets.UTF_8));
        }
        drop(tmp.resolve("plain.jar"), deploy, "plain.jar");
        await("the not-a-bundle notice", WAIT, () -> host.noticeLines().stream()
                .anyMatch(l -> l.contains("deploy/plain.jar is not an OSGi bundle")));

        // A bundle whose imports do not resolve.
        drop(rewrite(fifoJar(), tmp.resolve("bad.jar"), "Bundle-SymbolicName", "org.blockyard.plugin.bad",
                "Import-Package", "org.blockyard.api.io;version=\"[9,10)\""), deploy, "bad.jar");
        await("the cannot-start notice", WAIT, () -> host.noticeLines().stream()
                .anyMatch(l -> l.contains("bad.jar") && l.contains("cannot start") && l.contains("nothing provides") && l.contains("org.blockyard.api.io")));

        // A second bundle offering the id fifo: refused, the first keeps running.
        assertEquals("noop deadline anticipatory cfq [fifo]", shell(host, "blockyard:scheduler fifo").lines().findFirst().orElseThrow());
        drop(rewrite(fifoJar(), tmp.resolve("twin.jar"), "Bundle-SymbolicName", "org.blockyard.plugin.twin"),
                deploy, "twin.jar");
        await("the duplicate notice", WAIT, () -> host.noticeLines().stream()
                .anyMatch(l -> l.contains("'fifo' of bundle org.blockyard.plugin.twin") && l.contains("refused")));
        assertEquals("noop deadline anticipatory cfq [fifo]", listing());
        Files.delete(deploy.resolve("twin.jar"));
        await("the twin gone", WAIT, () -> host.framework().getBundleContext().getBundles().length == bundles + 1);
        assertEquals("noop deadline anticipatory cfq [fifo]", listing(), "the twin's departure leaves the first fifo alone");
        assertTrue(shell(host, "blockyard:log").contains("refused"));
    }

    @Test
    void aPolicyPluginIsTrackedIntoTheAllocatorSelectedAndATakenIdIsRefused() throws Exception {
        host = HostFixture.start(tmp, tmp.resolve("no-plugins"), null);
        assertEquals("[reservation]", shell(host, "blockyard:policy").trim(), "no-reservation is a plugin, not built in");
        Path jar;
        try (var s = Files.list(Path.of("..", "..", "plugins", "org.blockyard.plugin.noreservation", "target"))) {
            jar = s.filter(p -> p.getFileName().toString().endsWith(".jar") && !p.toString().contains("tests"))
                    .findFirst().orElseThrow();
        }
        Path deploy = tmp.resolve("deploy");
        drop(jar, deploy, "noreservation.jar");
        await("the policy plugin", WAIT, () -> policyListing().equals("[reservation] no-reservation"));
        assertTrue(shell(host, "blockyard:policy no-reservation").startsWith("reservation [no-reservation]"));

        // A second bundle offering the same id is refused; the first keeps running.
        drop(rewrite(jar, tmp.resolve("twin.jar"), "Bundle-SymbolicName", "org.blockyard.plugin.twinpolicy"),
                deploy, "twin.jar");
        await("the duplicate policy notice", WAIT, () -> host.noticeLines().stream()
                .anyMatch(l -> l.contains("org.blockyard.plugin.twinpolicy") && l.contains("refused")));
        assertEquals("reservation [no-reservation]", shell(host, "blockyard:policy").trim());

        BundleContext framework = host.framework().getBundleContext();
        var policyRef = framework.getServiceReference(AllocationPolicyFactory.class);
        AllocationPolicyFactory real = framework.getService(policyRef);

        // The active plugin goes away: the default takes over; a name not installed falls back and says so.
        Files.delete(deploy.resolve("noreservation.jar"));
        await("the fallback", WAIT, () -> policyListing().startsWith("[reservation]"));
        assertTrue(shell(host, "blockyard:policy gone").contains("running the default, reservation"));

        // Two services of one bundle (here the system bundle's, offering the plugin's factory): the newer takes
        // the id even before the older leaves, and the older's departure changes nothing.
        var older = framework.registerService(AllocationPolicyFactory.class, real, null);
        assertTrue(shell(host, "blockyard:policy no-reservation").startsWith("reservation [no-reservation]"));
        var newer = framework.registerService(AllocationPolicyFactory.class, real, null);
        older.unregister();
        for (int i = 0; i < 5; i++) {
            assertEquals("reservation [no-reservation]", policyListing(), () -> String.join("\n", host.noticeLines()));
            Thread.sleep(20);
        }
        newer.unregister();
        await("no-reservation gone", WAIT, () -> policyListing().equals("[reservation]"));
    }

    private String policyListing() {
        try {
            return shell(host, "blockyard:policy").trim();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** What {@code blockyard run} did: its exit code and what it printed. */
    private record Ran(int code, String out, String err) {}

    /** {@code blockyard run} with the framework's storage and the deploy folder under {@code tmp}, then {@code args}. */
    private Ran run(String... args) throws Exception {
        Path config = Files.writeString(tmp.resolve("host.conf"),
                "blockyard.host.storage = \"" + tmp.resolve("cache").toString().replace("\\", "/") + "\"\n");
        List<String> all = new ArrayList<>(List.of("--config", config.toString(), "--deploy",
                tmp.resolve("deploy").toString()));
        all.addAll(List.of(args));
        ByteArrayOutputStream out = new ByteArrayOutputStream(), err = new ByteArrayOutputStream();
        PrintStream realOut = System.out, realErr = System.err;
        int code;
        try {
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
            code = new picocli.CommandLine(new RunCommand()).execute(all.toArray(String[]::new));
        } finally {
            System.setOut(realOut);
            System.setErr(realErr);
        }
        return new Ran(code, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    @Test
    void runExecPrintsTheSchedulerListingAndTheBundleList() throws Exception {
        Ran r = run("--exec", "blockyard:scheduler; lb");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().startsWith("noop [deadline] anticipatory cfq fifo"), r.out());
        assertTrue(r.out().contains("System Bundle") && r.out().contains("Blockyard fifo elevator")
                && r.out().contains("Apache Felix Declarative Services"), r.out());
    }

    @Test
    void runOnAVolumeSwitchesItsQueuesElevatorAndLeavesItClosedCleanly() throws Exception {
        Path image = tmp.resolve("vol.img");
        Volume.mkfs(image, Layout.make(4096, 4L * 4096, 4096, 64, 256, 0, 0));
        Ran r = run("--volume", image.toString(), "--exec", "blockyard:scheduler noop; blockyard:scheduler");
        assertEquals(0, r.code(), r.out() + r.err());
        assertTrue(r.out().contains("[noop] deadline"), r.out());
        assertTrue(Volume.inspect(image).superblock.clean(), "closed cleanly on the way out");
        Fsck.Result f = Fsck.check(image, false);
        assertTrue(f.clean(), f::report);
    }

    @Test
    void statementsSplitAtSemicolonsOutsideQuotesAndBraces() {
        assertEquals(List.of("a", "b 'x;y'", "c { d; e }"), RunCommand.statements("a; b 'x;y';c { d; e }\n"));
    }
}
