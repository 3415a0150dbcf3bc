/**
 * A durable volume: the on-disk format (docs/volume-format.md), the metadata journal, recovery, fsck and the
 * tools that read an image.
 *
 * <h2>Data</h2>
 * <ul>
 *   <li>On disk: per group a header block (the superblock in group 0, backups in groups 1 and powers of 3, 5,
 *       7) and a block bitmap; in group 0 the group descriptors (free count, bitmap location, the bitmap's
 *       CRC32C, their own CRC32C), the file table (named files and extent-API owners with their extent maps,
 *       CRC32C per block) and the journal. All of it is system zone.</li>
 *   <li>{@link org.blockyard.runtime.volume.Metadata}: the same in memory, owned by the journal's commit
 *       thread, which applies the {@link org.blockyard.runtime.volume.JournalRecord}s groups and files append.
 *       It never reads an actor's state.</li>
 * </ul>
 *
 * <h2>Invariants</h2>
 * A call is acknowledged only once the last record appended for its file or owner by the time of its answer
 * is in a forced transaction (and with it every record before it). A commit holds a prefix of the append
 * order (causes before effects). At most one transaction is in flight to the device; the next one gathers
 * meanwhile. Checkpoints write the committed images only, and the tail moves only once they are forced.
 * Every metadata block is checked against its checksum when read, and a block that fails is never used.
 * Reservation windows and preallocations are never written; after a crash, blocks used and owned by no one
 * are freed at recovery.
 *
 * <h2>Operations</h2>
 * <pre>
 *   allocate / free        actor changes bitmap or map -> record appended (short lock) -> answer -> facade waits for
 *                          the file's (or owner's) last record
 *   actor clients          DurableReplies stands in for the client's replyTo: each reply is handed on once durable,
 *                          in the order the replies came
 *   commit                 commit thread: apply records, build the transaction in one buffer (descriptors, blocks,
 *                          commit CRC32C), hand it to the queue with a FLUSH; gather the next while it is in flight
 *   checkpoint             once the log is half full: the logged images go home with the next commit, the new
 *                          tail with the one after; no commit waits for it unless the log is full
 *   open                   superblock, journal replay (torn last transaction dropped), check all, reconcile if unclean
 *   close                  actors stop, last commit, checkpoint, reconcile, superblock clean
 *   fsck                   e2fsck's passes 0, 1, 2, 5 over an image; --repair for the safe fixes
 * </pre>
 *
 * <h2>Concurrency</h2>
 * Group and file actors append from their own threads; the only shared lock guards the record list and is held
 * for an add. One commit thread owns {@code Metadata} and the log; it never blocks on the device (a FLUSH's
 * completion wakes it). Acknowledgements complete on one thread of their own, so callers' continuations never
 * delay the next commit.
 *
 * <h2>Tunables ({@code blockyard.volume} in {@code config/blockyard.conf})</h2>
 * <pre>
 *   journal-blocks                1024    smallest journal mkfs makes (4 MiB); mkfs sizes it as mke2fs does,
 *                                         at most half of group 0 beside its other metadata
 *   file-table-blocks             1024    file table mkfs makes
 *   journal.commit-interval       1ms     longest a record waits for company (only with nothing in flight, and only
 *                                         while fewer callers wait than the last commit acknowledged)
 *   journal.max-transaction-blocks 256    logged blocks per transaction
 *   journal.checkpoint-fraction   0.5     log fill that starts a checkpoint
 *   journal.checkpoint-slice-blocks 64    home writes a commit carries at least (a checkpoint rides several)
 *   journal.forced-commits        false   true: a commit without checkpoint writes ends in a FUA write, no FLUSH
 *   queue-depth                   32      requests the image's queue keeps in flight (a checkpoint's home writes)
 * </pre>
 */
package org.blockyard.runtime.volume;
