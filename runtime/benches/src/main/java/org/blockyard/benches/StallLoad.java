package org.blockyard.benches;

import java.util.concurrent.CompletableFuture;

/** One client of the stall bench: started once, done when its calls are made, with their latencies. */
interface StallLoad {
    void start();

    /** Completes when the client's calls are done; its latency is then corrected. */
    CompletableFuture<? extends StallLoad> done();

    Latency latency();
}
