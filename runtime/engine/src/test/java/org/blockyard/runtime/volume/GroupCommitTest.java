package org.blockyard.runtime.volume;

import static org.blockyard.runtime.volume.Volumes.join;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** How the journal groups records into transactions, and whom it makes wait. */
class GroupCommitTest {
    @TempDir
    Path dir;

    /** What a test does with a journal over a fresh volume's metadata, its commit thread not started. */
    private interface OnJournal {
        void accept(Journal j, Metadata meta) throws Exception;
    }

    private void onFreshJournal(OnJournal body) throws Exception {
        Path image = Volumes.make(dir, 4);
        Metadata meta = Volume.inspect(image);
        try (FileChannel ch = FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            body.accept(new Journal(ch, meta, Volumes.FAST, 0, 1), meta);
        }
    }

    @Test
    void aBlockChangedByManyRecordsIsLoggedOncePerTransaction() throws Exception {
        onFreshJournal((j, meta) -> {
            long first = meta.geometry.systemBlocks(0);
            for (int i = 0; i < 100; i++) j.append(new JournalRecord.Bitmap(0, first + i, 1, true));
            j.start(); // all 100 are waiting: one transaction takes them
            j.sync().get(30, TimeUnit.SECONDS);
            j.stop();
            Journal.Stats s = j.stats();
            assertEquals(100, s.records());
            assertEquals(1, s.transactions());
            assertEquals(2, s.loggedBlocks(), "group 0's bitmap and the descriptor block, once each: " + s);
        });
    }

    @Test
    void aLoneCallerIsNotHeldForTheCommitInterval() {
        Path image = Volumes.make(dir, 4);
        // An hour of waiting for company: a caller who waited for it would never see its answer.
        Journal.Settings hour = new Journal.Settings(TimeUnit.HOURS.toNanos(1), 256, 0.5);
        try (Volume v = Volume.open(image, Volumes.CONFIG, hour)) {
            join(v.allocator().open("alone"));
            for (int i = 0; i < 20; i++) join(v.allocator().getBlocks("alone", i, 1, true));
            assertTrue(v.journalStats().transactions() >= 20, "each call its own commit: " + v.journalStats());
        }
    }

    /** A log whose barriers complete only when the test opens the gate: the device has not said "durable" yet. */
    private static final class GatedLog extends LogWriter {
        final CompletableFuture<Void> gate = new CompletableFuture<>();
        final CountDownLatch submitted = new CountDownLatch(1);

        @Override
        Barrier submit(List<Write> writes, boolean preflush) {
            submitted.countDown();
            return new Barrier() {
                @Override
                CompletionStage<?> done() {
                    return gate;
                }

                @Override
                void await() throws IOException {
                    gate.join();
                }

                @Override
                boolean succeeded() {
                    return gate.isDone();
                }

                @Override
                long flushNanos() {
                    return 0;
                }
            };
        }
    }

    @Test
    void aCallIsAcknowledgedOnlyOnceItsTransactionIsDurable() throws Exception {
        onFreshJournal((j, meta) -> {
            GatedLog log = new GatedLog();
            j.writeThrough(log);
            j.start();
            long record = j.append(new JournalRecord.Bitmap(0, meta.geometry.systemBlocks(0), 1, true));
            CompletableFuture<Void> ack = j.durableThrough(record);
            assertTrue(log.submitted.await(30, TimeUnit.SECONDS), "the transaction was handed to the log");
            // Written, perhaps, but not known durable: no acknowledgement, however long we wait.
            assertThrows(TimeoutException.class, () -> ack.get(300, TimeUnit.MILLISECONDS));
            assertFalse(ack.isDone());
            log.gate.complete(null);
            ack.get(30, TimeUnit.SECONDS);
            j.abandon();
        });
    }
}
