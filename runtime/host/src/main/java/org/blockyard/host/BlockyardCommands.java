package org.blockyard.host;

import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.blockyard.api.alloc.AllocatorStats;
import org.blockyard.api.io.ElevatorDescriptor;
import org.blockyard.api.io.ElevatorSwitch;
import org.blockyard.api.io.IoException;
import org.blockyard.api.io.QueueStats;
import org.blockyard.api.plugin.Tunable;
import org.blockyard.runtime.alloc.ActorBlockAllocator;

/**
 * The {@code blockyard:} commands of the Gogo shell, a control surface like sysfs. Registered by the host
 * as a service with {@code osgi.command.scope=blockyard}; Gogo finds each function by name and picks the
 * overload by the number of arguments. Output goes to {@code System.out}, which Gogo points at the
 * session. A refused command throws with a one-line message and changes nothing; in a script
 * ({@code --exec}) that ends the script.
 */
public final class BlockyardCommands {
    static final String[] FUNCTIONS = {"scheduler", "policy", "tunables", "stats", "bench", "log", "shutdown"};
    /** Every function with its arguments, for {@code run --help} (a test checks it names each of {@link #FUNCTIONS}). */
    static final String SYNOPSIS = "blockyard:scheduler [NAME], blockyard:policy [NAME], blockyard:tunables NAME [KEY VALUE],"
            + " blockyard:stats, blockyard:bench [JOBFILE|stop|wait], blockyard:log, blockyard:shutdown";

    /** How long a command waits for the engine's answer; the engine answers in microseconds when well. */
    private static final Duration ANSWER = Duration.ofSeconds(30);

    private final Host host;

    BlockyardCommands(Host host) {
        this.host = host;
    }

    private static PrintStream out() {
        return System.out;
    }

    @Descriptor("list the io schedulers, the active one in brackets")
    public void scheduler() {
        out().println(await(host.queue().schedulerListing()));
    }

    @Descriptor("switch the io scheduler to NAME (id or alias), remembered across plugin updates")
    public void scheduler(@Descriptor("NAME, an io scheduler's id or alias") String name) {
        ElevatorSwitch s;
        try {
            s = await(host.queue().setElevator(name));
        } catch (IoException.UnknownElevator e) {
            throw new IllegalArgumentException("no io scheduler '" + name + "' is installed (installed: "
                    + String.join(" ", await(host.queue().elevators())) + "); nothing changed");
        } catch (IoException.SwitchFailed e) {
            throw new IllegalArgumentException(e.getMessage() + "; the running scheduler stays");
        }
        host.elevators().select(name);
        out().println(await(host.queue().schedulerListing()));
        if (s.movedRequests() > 0) out().println(s.movedRequests() + " queued requests moved to " + s.active());
    }

    @Descriptor("list the allocation policies, the active one in brackets")
    public void policy() {
        out().println(host.store().allocator().policyListing());
    }

    @Descriptor("switch the allocation policy to NAME (id or alias); a name not installed selects the default "
            + "until a plugin offers it")
    public void policy(@Descriptor("NAME, an allocation policy's id or alias") String name) {
        ActorBlockAllocator.PolicySwitch s = await(host.store().allocator().setPolicy(name));
        out().println(host.store().allocator().policyListing());
        if (s.fellBack())
            out().println("no allocation policy '" + name + "' is installed; running the default, " + s.active()
                    + " (" + name + " becomes active when a plugin offers it)");
    }

    @Descriptor("show the tunables of plugin NAME (io scheduler or allocation policy): value, default, range, unit and reason")
    public void tunables(@Descriptor("NAME, a plugin's id or alias") String name) {
        var policy = host.store().allocator().policies().resolve(name);
        if (host.elevators().descriptor(name).isEmpty() && policy.isPresent()) {
            var d = host.store().allocator().policies().descriptor(policy.get());
            Map<String, Long> values = new LinkedHashMap<>();
            host.store().allocator().policies().tunables(d.id()).forEach((t, v) -> values.put(t.name(), v));
            table(d.id(), d.aliases(), d.description(), d.tunables(), values);
            return;
        }
        ElevatorDescriptor d = elevator(name);
        table(d.id(), d.aliases(), d.description(), d.tunables(), values(d));
    }

    private static void table(String id, java.util.List<String> aliases, String description,
                              java.util.List<Tunable> tunables, Map<String, Long> values) {
        out().printf("%s%s: %s%n", id, aliases.isEmpty() ? "" : " (alias " + String.join(", ", aliases) + ")",
                description);
        if (tunables.isEmpty()) {
            out().println("  (no tunables)");
            return;
        }
        out().printf("  %-28s %10s %10s  %-22s %-9s %s%n", "name", "value", "default", "range", "unit", "reason");
        for (Tunable t : tunables)
            out().printf("  %-28s %10d %10d  %-22s %-9s %s%n", t.name(), values.get(t.name()), t.defaultValue(),
                    "[" + t.min() + ", " + t.max() + "]", t.unit(), t.reason());
    }

    @Descriptor("set tunable KEY of plugin NAME to VALUE (checked against its range)")
    public void tunables(@Descriptor("NAME, a plugin's id or alias") String name,
                         @Descriptor("KEY, one of its tunables") String key,
                         @Descriptor("VALUE, a whole number") String value) {
        var policy = host.store().allocator().policies().resolve(name);
        if (host.elevators().descriptor(name).isEmpty() && policy.isPresent()) {
            setPolicyTunable(policy.get(), key, value);
            return;
        }
        ElevatorDescriptor d = elevator(name);
        Tunable t = d.tunable(key).orElseThrow(() -> new IllegalArgumentException(d.id() + " has no tunable '" + key
                + "' (has: " + String.join(" ", d.tunables().stream().map(Tunable::name).toList()) + "); nothing changed"));
        long v;
        try {
            v = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(d.id() + "." + t.name() + ": '" + value + "' is not a whole number ("
                    + t.unit() + "); nothing changed");
        }
        Map<String, Long> next = new LinkedHashMap<>(values(d));
        next.put(t.name(), v);
        try {
            Tunable.resolve(d.id(), d.tunables(), next);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; nothing changed");
        }
        host.overlay().set(d.id(), t.name(), v);
        String active = await(host.queue().activeElevator());
        if (active.equals(d.id())) {
            int moved = rebuild(d.id());
            out().printf("%s.%s = %d (the running %s was rebuilt with it; %d queued requests moved)%n",
                    d.id(), t.name(), v, d.id(), moved);
        } else {
            out().printf("%s.%s = %d (applies when %s is selected)%n", d.id(), t.name(), v, d.id());
        }
    }

    private void setPolicyTunable(String id, String key, String value) {
        var d = host.store().allocator().policies().descriptor(id);
        Tunable t = d.tunable(key).orElseThrow(() -> new IllegalArgumentException(d.id() + " has no tunable '" + key
                + "' (has: " + String.join(" ", d.tunables().stream().map(Tunable::name).toList()) + "); nothing changed"));
        long v;
        try {
            v = Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(d.id() + "." + t.name() + ": '" + value + "' is not a whole number ("
                    + t.unit() + "); nothing changed");
        }
        try {
            await(host.store().allocator().setPolicyTunable(d.id(), t.name(), v));
        } catch (org.blockyard.api.alloc.AllocationException e) {
            throw new IllegalArgumentException(e.getMessage() + "; nothing changed");
        }
        out().printf("%s.%s = %d%s%n", d.id(), t.name(), v,
                d.id().equals(host.store().allocator().policy()) ? " (the running policy was rebuilt with it)"
                        : " (applies when " + d.id() + " is selected)");
    }

    /**
     * Builds the running elevator {@code id} anew, so it takes the new values: the queue keeps one it is
     * already on, so it goes through another one and back. Each switch moves the queued requests; none is lost.
     */
    private int rebuild(String id) {
        String other = await(host.queue().elevators()).stream().filter(e -> !e.equals(id)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no other io scheduler to rebuild " + id + " through"));
        ElevatorSwitch away = await(host.queue().setElevator(other));
        ElevatorSwitch back = await(host.queue().setElevator(id));
        return away.movedRequests() + back.movedRequests();
    }

    @Descriptor("queue and allocator figures")
    public void stats() {
        QueueStats q = await(host.queue().stats());
        AllocatorStats a = await(host.store().allocator().stats());
        PrintStream o = out();
        o.printf("queue: scheduler %s; %d submissions, %d completed; %d requests dispatched (%d sectors, mean %.1f, "
                        + "largest %d); merges %d back, %d front, %d coalesced%n",
                q.elevator(), q.submissions(), q.completed(), q.requestsDispatched(), q.sectorsDispatched(),
                q.meanRequestSectors(), q.maxRequestSectors(), q.backMerges(), q.frontMerges(), q.coalesced());
        StringBuilder e = new StringBuilder();
        q.elevatorStats().forEach((k, v) -> e.append(' ').append(k).append('=').append(v));
        o.println(q.elevator() + ":" + e);
        o.printf("allocator: policy %s; %d of %d data blocks free; %d windows, %d provisional searches; "
                        + "%d messages, %d search slices, %d stashed%n",
                host.store().allocator().policy(), a.freeBlocks(), a.dataBlocks(), a.windows(), a.provisionalSearches(),
                a.messages(), a.searchSlices(), a.stashed());
        String bench = host.bench().status();
        if (bench != null) o.println(bench);
    }

    @Descriptor("run the jobs of a workload file (docs/jobs.md) in the background, on the host's engine with the io"
            + " scheduler and policy it runs; stop: end it (what is in flight is answered); wait: wait for its report;"
            + " alone: where it is")
    public void bench(CommandSession session,
                      @Descriptor("JOBFILE [--KEY=VALUE...], stop or wait") String... args) throws InterruptedException {
        if (args.length == 0) {
            out().println(host.bench().describe());
            return;
        }
        if (args.length == 1 && args[0].equals("stop")) {
            out().println(host.bench().stop());
            return;
        }
        if (args.length == 1 && args[0].equals("wait")) {
            String report = host.bench().await();
            out().print(report.endsWith("\n") ? report : report + "\n");
            return;
        }
        java.nio.file.Path dir = session.currentDir();
        java.nio.file.Path file = dir != null ? dir.resolve(args[0]) : java.nio.file.Path.of(args[0]);
        for (String line : host.bench().start(host, file, java.util.Arrays.asList(args).subList(1, args.length),
                session.getConsole())) out().println(line);
    }

    @Descriptor("what the host said about plugins: refused, fell back, not a bundle, cannot resolve, FileInstall's traces")
    public void log() {
        for (String line : host.notices()) out().println(line);
    }

    @Descriptor("stop the framework and the engine, and leave")
    public void shutdown() {
        out().println("shutting down");
        host.requestShutdown();
    }

    private ElevatorDescriptor elevator(String name) {
        return host.elevators().descriptor(name).orElseThrow(() -> new IllegalArgumentException(
                "no plugin '" + name + "' is installed (io schedulers: "
                        + String.join(" ", await(host.queue().elevators())) + "; allocation policies: "
                        + String.join(" ", host.store().allocator().policies().ids()) + ")"));
    }

    /** The values elevator {@code d} is built with: configured, then set from the shell. */
    private Map<String, Long> values(ElevatorDescriptor d) {
        Map<String, Long> given = new LinkedHashMap<>();
        host.configuredTunables(d.id()).forEach((k, v) -> {
            if (d.tunable(k).isPresent()) given.put(k, v);
        });
        given.putAll(host.overlay().overrides(d.id()));
        return Tunable.resolve(d.id(), d.tunables(), given);
    }

    private static <T> T await(CompletionStage<T> stage) {
        try {
            return stage.toCompletableFuture().get(ANSWER.toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | CompletionException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            if (c instanceof RuntimeException r) throw r;
            throw new IllegalStateException(c.getMessage(), c);
        } catch (TimeoutException e) {
            throw new IllegalStateException("the engine did not answer within " + ANSWER.toSeconds() + " s");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted");
        }
    }
}
