package org.blockyard.runtime.alloc;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadFactory;

import akka.dispatch.DispatcherPrerequisites;
import akka.dispatch.ExecutorServiceConfigurator;
import akka.dispatch.ExecutorServiceFactory;
import akka.dispatch.ForkJoinExecutorConfigurator;
import com.typesafe.config.Config;

/**
 * Makes a dispatcher run on a {@link ChainExecutor}: {@code executor =
 * "org.blockyard.runtime.alloc.ChainExecutorConfigurator"} in a dispatcher's configuration. The pool under
 * it is Akka's own fork-join executor, made from the dispatcher's {@code fork-join-executor} section;
 * {@code chain-executor.max-hops} bounds the successors run in a row, and {@code chain-executor.on = off}
 * leaves the plain fork-join executor.
 */
public final class ChainExecutorConfigurator extends ExecutorServiceConfigurator {

    private final ForkJoinExecutorConfigurator forkJoin;
    private final boolean on;
    private final int maxHops;

    /** Akka calls this with the dispatcher's whole configuration. */
    public ChainExecutorConfigurator(Config dispatcher, DispatcherPrerequisites prerequisites) {
        super(dispatcher, prerequisites);
        this.forkJoin = new ForkJoinExecutorConfigurator(dispatcher.getConfig("fork-join-executor"), prerequisites);
        this.on = dispatcher.getBoolean("chain-executor.on");
        this.maxHops = dispatcher.getInt("chain-executor.max-hops");
    }

    @Override
    public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
        ExecutorServiceFactory pool = forkJoin.createExecutorServiceFactory(id, threadFactory);
        if (!on) {
            return pool;
        }
        return () -> new ChainExecutor((ForkJoinPool) pool.createExecutorService(), maxHops);
    }
}
