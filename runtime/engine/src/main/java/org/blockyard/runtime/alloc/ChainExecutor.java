package org.blockyard.runtime.alloc;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ForkJoinTask;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The allocator's executor: a fork-join pool, except that the first task a running task submits is run
 * next on the same worker, without passing through the pool, when nothing else waits there.
 *
 * <p>Why: an actor's message is one task (a run of its mailbox). A client's chain of messages (client,
 * file shard, group, back to the client) submits one task at a time, each from the task before.
 * {@code ForkJoinPool} wakes an idle worker for each task pushed into an empty queue; on two cores the woken
 * worker steals it, the first parks, and every hop of the chain pays a wake-up and a move between cores.
 * Here the hop stays on its worker, as under a pool of one worker, and every other task goes through the
 * pool as before, so independent work still spreads over every core and idle workers still steal.
 *
 * <p>Only while the pool's other workers are idle: the wake-up is what a successor saves, and a worker
 * already running takes a pushed task at no such cost. So a task is held only if no other worker is active
 * when it is submitted, and runs inline only if none is when its task ends; else it goes to the pool. Held
 * and run regardless, successors hid work from the other worker: one client's small files ran 1.65 times
 * as fast as under the plain pool, but 16 clients' and 16 writers' appends 15 to 20% slower; with the
 * checks, 1.5 times and no loss (alternating invocations, README). Every task the pool gets is wrapped
 * in a {@link Hop}, so that any task can start a chain: tasks pushed bare while another worker was active
 * broke most chains up (1.2 to 1.3 times); done hops are reused, so the wrapper costs no allocation.
 *
 * <p>Bounds, so that every task still runs in bounded time:
 * <ul>
 *   <li>A task keeps at most one successor (the first task it submits); later ones go to the pool.</li>
 *   <li>The successor runs right after its task only while the worker's own pool queue is empty and no
 *       other worker is active, and, every {@code maxHops} tasks in a row, only while nothing waits anywhere
 *       in the pool (another worker's queue, an outside submission); otherwise it is pushed to the pool,
 *       behind what waits, as any task. So a successor waits at most for the rest of the task that submitted
 *       it, and a chain cannot keep a worker from its queue. Pushing it while nothing waits would only wake
 *       an idle worker to steal it: one client's files written whole, four hops each, paid that wake-up every
 *       sixteenth file, and it showed in their p99 ({@code bench smallfiles --whole-file}).</li>
 *   <li>A task that throws is reported to its thread's uncaught-exception handler, and its successor is
 *       still run or pushed.</li>
 *   <li>A successor is never lost: one the pool refuses (it was shut down after the submitter was
 *       accepted) runs right there, as the pool's shutdown runs the tasks it accepted.</li>
 * </ul>
 * Successors are invisible to other workers until pushed: a task that blocks holds its successor with it.
 * Nothing the allocator runs here blocks (the block-I/O queue and the journal have threads of their own).
 */
public final class ChainExecutor extends AbstractExecutorService {

    private static final ThreadLocal<Worker> WORKER = new ThreadLocal<>();

    private final ForkJoinPool pool;
    private final int maxHops;

    /**
     * @param pool    runs every task that is not run as a successor; shut down with this executor
     * @param maxHops successors run in a row before the chain looks whether anything waits anywhere in the
     *                pool (and goes through the pool if so), at least 0; 0 holds no successor
     */
    public ChainExecutor(ForkJoinPool pool, int maxHops) {
        if (maxHops < 0) {
            throw new IllegalArgumentException("max-hops must be at least 0, got " + maxHops);
        }
        this.pool = Objects.requireNonNull(pool, "pool");
        this.maxHops = maxHops;
    }

    @Override
    public void execute(Runnable task) {
        Objects.requireNonNull(task, "task");
        Worker w = WORKER.get();
        if (w != null && w.executor == this && w.running && w.successor == null && maxHops > 0
                && pool.getActiveThreadCount() <= 1) {
            w.successor = task;
            return;
        }
        pool.execute(hop(w, task));
    }

    /** A hop for {@code task}: one {@code w}'s chains are done with (a worker of this pool's), else a new one. */
    private Hop hop(Worker w, Runnable task) {
        Hop h = w != null && w.executor == this ? w.reuse() : null;
        if (h == null) {
            return new Hop(task);
        }
        h.reinitialize();
        h.task = task;
        return h;
    }

    /** Runs {@code first}, then its successors while nothing waits in this worker's pool queue. */
    private void runChain(Hop hop, Runnable first) {
        Worker w = WORKER.get();
        if (w == null || w.executor != this) {
            w = new Worker(this);
            WORKER.set(w);
        }
        if (w.running) { // a task ran the pool's queue itself (helping a join): no chain inside a chain
            runOne(first);
            return;
        }
        // The hop this worker ran before is done by now (the pool marks a task done before its next one):
        // it may carry another task.
        w.recycle(w.lastHop);
        w.lastHop = hop;
        w.running = true;
        try {
            runOne(first);
            for (int hops = 0; w.successor != null; hops++) {
                Runnable next = w.successor;
                w.successor = null;
                boolean yield = ForkJoinTask.getQueuedTaskCount() > 0 || pool.getActiveThreadCount() > 1;
                if (!yield && hops >= maxHops) { // every maxHops hops, a look at the whole pool too
                    yield = pool.hasQueuedSubmissions() || pool.getQueuedTaskCount() > 0;
                    hops = 0;
                }
                if (yield && push(w, next)) {
                    break;
                }
                runOne(next);
            }
        } finally {
            w.running = false;
            Runnable left = w.successor;
            if (left != null) {
                w.successor = null;
                if (!push(w, left)) {
                    runOne(left);
                }
            }
        }
    }

    /** Hands {@code task} to the pool; false when the pool is shut down (its submitter was not refused). */
    private boolean push(Worker w, Runnable task) {
        try {
            pool.execute(hop(w, task));
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    private static void runOne(Runnable task) {
        try {
            task.run();
        } catch (Throwable e) {
            Thread t = Thread.currentThread();
            Thread.UncaughtExceptionHandler h = t.getUncaughtExceptionHandler();
            if (h != null) {
                h.uncaughtException(t, e);
            }
        }
    }

    @Override
    public void shutdown() {
        pool.shutdown();
    }

    @Override
    public List<Runnable> shutdownNow() {
        return pool.shutdownNow();
    }

    @Override
    public boolean isShutdown() {
        return pool.isShutdown();
    }

    @Override
    public boolean isTerminated() {
        return pool.isTerminated();
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        return pool.awaitTermination(timeout, unit);
    }

    /** One worker thread's chain state; only that thread touches it. */
    private static final class Worker {
        /** Done hops kept for reuse: each pushed task would otherwise cost one (24 to 32 bytes). */
        private static final int SPARE_HOPS = 64;

        final ChainExecutor executor;
        boolean running;
        Runnable successor;
        Hop lastHop;
        private final Hop[] spare = new Hop[SPARE_HOPS];
        private int spares;

        Worker(ChainExecutor executor) {
            this.executor = executor;
        }

        void recycle(Hop h) {
            if (h != null && spares < SPARE_HOPS) {
                h.task = null;
                spare[spares++] = h;
            }
        }

        Hop reuse() {
            if (spares == 0) {
                return null;
            }
            Hop h = spare[--spares];
            spare[spares] = null;
            return h;
        }
    }

    /** A task as the pool runs it: the task, then its chain. */
    private final class Hop extends ForkJoinTask<Void> {
        private static final long serialVersionUID = 1L;
        private transient Runnable task;

        Hop(Runnable task) {
            this.task = task;
        }

        @Override
        public Void getRawResult() {
            return null;
        }

        @Override
        protected void setRawResult(Void value) {
        }

        @Override
        protected boolean exec() {
            runChain(this, task);
            return true;
        }
    }
}
