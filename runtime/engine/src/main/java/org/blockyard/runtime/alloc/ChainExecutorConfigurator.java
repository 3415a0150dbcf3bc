package org.blockyard.runtime.alloc;

import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.ThreadFactory;

import akka.dispatch.DispatcherPrerequisites;
import akka.dispatch.ExecutorServiceConfigurator;
import akka.dispatch.ExecutorServiceFactory;
import akka.dispatch.ForkJoinExecutorConfigurator;
import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

/**
 * Makes a dispatcher run on a {@link ChainExecutor}: {@code executor =
 * "org.blockyard.runtime.alloc.ChainExecutorConfigurator"} in a dispatcher's configuration. The pool under
 * it is Akka's own fork-join executor, made from the dispatcher's {@code fork-join-executor} section;
 * {@code chain-executor.max-hops} bounds the successors run in a row, and {@code chain-executor.on = off}
 * leaves the plain fork-join executor.
 */
public final class ChainExecutorConfigurator extends ExecutorServiceConfigurator {

    private final ForkJoinExecutorConfigurator forkJoin;
    private final Config chain;

    /** Akka calls this with the dispatcher's whole configuration. */
    public ChainExecutorConfigurator(Config dispatcher, DispatcherPrerequisites prerequisites) {
        super(dispatcher, prerequisites);
        this.forkJoin = new ForkJoinExecutorConfigurator(dispatcher.getConfig("fork-join-executor"), prerequisites);
        this.chain = dispatcher.getConfig("chain-executor");
    }

    /**
     * Reads the settings here rather than in the constructor: Akka reports a constructor's failure as its
     * own "cannot instantiate" and drops the reason, a wrong value of {@code blockyard.akka-dispatcher.*}.
     */
    @Override
    public ExecutorServiceFactory createExecutorServiceFactory(String id, ThreadFactory threadFactory) {
        boolean on;
        int maxHops;
        try {
            on = chain.getBoolean("on");
            maxHops = chain.getInt("max-hops");
        } catch (ConfigException e) {
            throw new IllegalArgumentException("blockyard.akka-dispatcher.chain must be on or off and max-hops a"
                    + " whole number: " + e.getMessage(), e);
        }
        if (maxHops < 0) {
            throw new IllegalArgumentException("blockyard.akka-dispatcher.max-hops must be at least 0, got " + maxHops);
        }
        ExecutorServiceFactory pool = forkJoin.createExecutorServiceFactory(id, threadFactory);
        if (!on) {
            return pool;
        }
        return () -> new ChainExecutor((ForkJoinPool) pool.createExecutorService(), maxHops);
    }
}
