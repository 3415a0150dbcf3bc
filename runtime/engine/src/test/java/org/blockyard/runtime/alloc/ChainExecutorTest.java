package org.blockyard.runtime.alloc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import akka.actor.typed.ActorSystem;
import akka.actor.typed.javadsl.Behaviors;
import com.typesafe.config.Config;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * The chain executor keeps a task's first successor on its worker and still runs every task in bounded
 * time: behind what waits on the worker, within its hop limit, after a throw and after shutdown.
 */
class ChainExecutorTest {

    private final List<ChainExecutor> executors = new ArrayList<>();

    private ChainExecutor executor(int parallelism, int maxHops, Thread.UncaughtExceptionHandler handler) {
        ChainExecutor e = new ChainExecutor(
                new ForkJoinPool(parallelism, ForkJoinPool.defaultForkJoinWorkerThreadFactory, handler, true),
                maxHops);
        executors.add(e);
        return e;
    }

    @AfterEach
    void stop() throws InterruptedException {
        for (ChainExecutor e : executors) {
            e.shutdownNow();
            assertTrue(e.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @Test
    void aSuccessorRunsOnItsWorkerAfterItsTaskAndIsNotStolenMeanwhile() throws Exception {
        ChainExecutor e = executor(2, 64, null);
        AtomicLong firstEnded = new AtomicLong();
        AtomicLong successorStarted = new AtomicLong();
        AtomicReference<Thread> first = new AtomicReference<>();
        AtomicReference<Thread> second = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        e.execute(() -> {
            first.set(Thread.currentThread());
            e.execute(() -> {
                successorStarted.set(System.nanoTime());
                second.set(Thread.currentThread());
                done.countDown();
            });
            // The pool's other worker is idle: under a plain fork-join pool it would wake and take the
            // successor while this task still runs.
            long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
            while (System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            firstEnded.set(System.nanoTime());
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertSame(first.get(), second.get());
        assertTrue(successorStarted.get() >= firstEnded.get(), "the successor started before its task ended");
    }

    @Test
    void everyTaskRunsExactlyOnceUnderFanOutFromInsideAndOutside() throws Exception {
        ChainExecutor e = executor(2, 64, null);
        int roots = 2_000;
        int perRoot = 50;
        AtomicIntegerArray runs = new AtomicIntegerArray(roots * perRoot);
        CountDownLatch done = new CountDownLatch(roots * perRoot);
        Thread[] outside = new Thread[4];
        for (int t = 0; t < outside.length; t++) {
            int first = t;
            outside[t] = new Thread(() -> {
                for (int r = first; r < roots; r += outside.length) {
                    int root = r;
                    // Each root fans out: a chain of successors, each also sending a second task to the pool.
                    e.execute(new Runnable() {
                        int step;

                        @Override
                        public void run() {
                            int id = root * perRoot + step;
                            runs.incrementAndGet(id);
                            done.countDown();
                            step += 2;
                            if (step < perRoot) {
                                e.execute(this);
                                int sibling = id + 1;
                                e.execute(() -> {
                                    runs.incrementAndGet(sibling);
                                    done.countDown();
                                });
                            } else if (step == perRoot) {
                                runs.incrementAndGet(id + 1);
                                done.countDown();
                            }
                        }
                    });
                }
            });
            outside[t].start();
        }
        for (Thread t : outside) {
            t.join();
        }
        assertTrue(done.await(30, TimeUnit.SECONDS), done.getCount() + " tasks never ran");
        for (int i = 0; i < runs.length(); i++) {
            assertEquals(1, runs.get(i), "task " + i);
        }
    }

    @Test
    void aSuccessorGoesBehindTasksAlreadyWaitingOnItsWorker() throws Exception {
        ChainExecutor e = executor(1, 64, null);
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(3);
        e.execute(() -> {
            e.execute(() -> {
                order.add("successor");
                done.countDown();
            });
            e.execute(() -> {
                order.add("second");
                done.countDown();
            });
            e.execute(() -> {
                order.add("third");
                done.countDown();
            });
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertEquals(List.of("second", "third", "successor"), order);
    }

    /**
     * Past its hop limit a chain goes through the pool only when something waits there: pushed while nothing
     * waits, it would wake the idle worker to steal it. A chain of 2,000 hops with a limit of 4 reaches the
     * pool a handful of times at most (while the worker woken for its first task is still active), not 500.
     */
    @Test
    void pastItsHopLimitAChainStaysOnItsWorkerWhileNothingWaitsInThePool() throws Exception {
        java.util.concurrent.atomic.AtomicInteger pooled = new java.util.concurrent.atomic.AtomicInteger();
        ChainExecutor e = new ChainExecutor(new ForkJoinPool(2, ForkJoinPool.defaultForkJoinWorkerThreadFactory, null,
                true) {
            @Override
            public void execute(java.util.concurrent.ForkJoinTask<?> task) {
                pooled.incrementAndGet();
                super.execute(task);
            }

            @Override
            public void execute(Runnable task) {
                pooled.incrementAndGet();
                super.execute(task);
            }
        }, 4);
        executors.add(e);
        CountDownLatch done = new CountDownLatch(1);
        AtomicLong hops = new AtomicLong();
        Runnable[] hop = new Runnable[1];
        hop[0] = () -> {
            if (hops.incrementAndGet() < 2_000) e.execute(hop[0]);
            else done.countDown();
        };
        e.execute(hop[0]);
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertTrue(pooled.get() >= 1 && pooled.get() < 50, "tasks that went through the pool: " + pooled.get());
    }

    @Test
    void anEndlessChainLeavesTheOtherWorkersToOtherTasks() throws Exception {
        // With one worker a fork-join pool itself runs its worker's own queue before outside submissions, so
        // an endless chain there starves them with or without successors: the pool has two workers or more.
        ChainExecutor e = executor(2, 64, null);
        AtomicBoolean outsideRan = new AtomicBoolean();
        AtomicLong chainHops = new AtomicLong();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        CountDownLatch chainEnded = new CountDownLatch(1);
        Runnable[] hop = new Runnable[1];
        hop[0] = () -> {
            chainHops.incrementAndGet();
            if (!outsideRan.get() && System.nanoTime() < deadline) {
                e.execute(hop[0]);
            } else {
                chainEnded.countDown();
            }
        };
        e.execute(hop[0]);
        while (chainHops.get() < 1_000) {
            assertTrue(System.nanoTime() < deadline, "the chain did not get going");
            Thread.onSpinWait();
        }
        CompletableFuture<Long> outside = new CompletableFuture<>();
        e.execute(() -> {
            outsideRan.set(true);
            outside.complete(chainHops.get());
        });
        long ranAfter = outside.get(5, TimeUnit.SECONDS);
        assertTrue(chainEnded.await(5, TimeUnit.SECONDS));
        assertTrue(ranAfter > 0);
    }

    @Test
    void aTaskThatThrowsIsReportedAndItsSuccessorStillRuns() throws Exception {
        List<Throwable> reported = Collections.synchronizedList(new ArrayList<>());
        ChainExecutor e = executor(1, 64, (t, x) -> reported.add(x));
        CountDownLatch ran = new CountDownLatch(2);
        e.execute(() -> {
            e.execute(ran::countDown);
            throw new IllegalStateException("a task's fault");
        });
        e.execute(ran::countDown);
        assertTrue(ran.await(10, TimeUnit.SECONDS));
        assertEquals(1, reported.size());
        assertEquals("a task's fault", reported.get(0).getMessage());
    }

    @Test
    void aSuccessorSubmittedDuringShutdownStillRuns() throws Exception {
        ChainExecutor e = executor(1, 1, null);
        CountDownLatch inside = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch secondRan = new CountDownLatch(1);
        e.execute(() -> {
            inside.countDown();
            try {
                assertTrue(release.await(10, TimeUnit.SECONDS));
            } catch (InterruptedException x) {
                Thread.currentThread().interrupt();
            }
            // The first successor runs in the chain; the second reaches the hop limit and goes to the pool,
            // which the shutdown closed meanwhile.
            e.execute(() -> e.execute(secondRan::countDown));
        });
        assertTrue(inside.await(10, TimeUnit.SECONDS));
        e.shutdown();
        release.countDown();
        assertTrue(secondRan.await(10, TimeUnit.SECONDS));
        assertTrue(e.awaitTermination(10, TimeUnit.SECONDS));
    }

    @Test
    void theConfiguredDispatcherRunsOnTheChainExecutorAndOffGivesThePlainPool(@TempDir Path dir) throws Exception {
        assertEquals(ChainExecutor.class.getName(), executorClassOf(BlockyardConfig.load()));
        Path off = Files.writeString(dir.resolve("off.conf"), "blockyard.akka-dispatcher.chain = off\n");
        assertFalse(executorClassOf(BlockyardConfig.load(off)).contains("Chain"));
    }

    @Test
    void aWrongSettingIsRefusedWithItsName(@TempDir Path dir) throws Exception {
        for (String setting : List.of("blockyard.akka-dispatcher.max-hops = -1",
                "blockyard.akka-dispatcher.chain = maybe", "blockyard.akka-dispatcher.max-hops = many")) {
            Path file = Files.writeString(dir.resolve("wrong.conf"), setting + "\n");
            Throwable thrown = assertThrows(Throwable.class,
                    () -> executorClassOf(BlockyardConfig.load(file)), setting);
            StringBuilder messages = new StringBuilder();
            for (Throwable t = thrown; t != null; t = t.getCause()) {
                messages.append(t.getMessage()).append('\n');
            }
            assertTrue(messages.toString().contains("blockyard.akka-dispatcher."), setting + ": " + messages);
        }
    }

    /** The executor an actor system made from {@code config} runs its actors on, by its class name. */
    private static String executorClassOf(Config config) throws Exception {
        ActorSystem<Void> system = ActorSystem.create(Behaviors.empty(), "chain-test", config);
        try {
            akka.dispatch.Dispatcher d = (akka.dispatch.Dispatcher) system.classicSystem().dispatchers()
                    .lookup("akka.actor.default-dispatcher");
            return d.executorService().executor().getClass().getName();
        } finally {
            system.terminate();
            system.getWhenTerminated().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }
}
