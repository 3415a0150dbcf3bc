/**
 * The block allocator: one actor per block group, a few file shards that keep the file table, an actor of
 * its own for each open file that proved to be a stream, and the services over them.
 *
 * <h2>Data</h2>
 * <ul>
 *   <li>{@link org.blockyard.runtime.alloc.BlockGroup}, one per group, owned by its
 *       {@link org.blockyard.runtime.alloc.GroupActor}: the {@link org.blockyard.runtime.alloc.Bitmap} (the
 *       truth: 1 = used), the {@link org.blockyard.runtime.alloc.FreeRunIndex} derived from it (free runs by
 *       end and by power-of-two size), booked reservation windows by start and by file, prepared releases.</li>
 *   <li>{@link org.blockyard.runtime.alloc.FileState}, one per file ever opened, kept by the file's
 *       {@link org.blockyard.runtime.alloc.FileShard} (a hash of its name) and served there by a
 *       {@link org.blockyard.runtime.alloc.FileServer}, or lent to the file's own
 *       {@link org.blockyard.runtime.alloc.FileActor} while a proven stream is open: the extent map
 *       (written and unwritten runs), the ext3 goal state, the preallocation, and what the file needs to ask
 *       for its next block (below).</li>
 *   <li>{@link org.blockyard.runtime.alloc.VolumeState}: what every group publishes for walks to read without
 *       a message (free blocks with a volume total, the longest free run and the run sizes present, the
 *       fragmentation score's sums, open files per home group).</li>
 * </ul>
 *
 * <h2>One owner per fact</h2>
 * A reservation window is its group's: booked, extended, used and dropped in its {@code BlockGroup}, copied
 * nowhere. A file keeps only what it needs to ask for its next block: the goal size of its windows (the
 * policy's, carried by a group's answer whenever the group sized a window), the group holding its window (to
 * drop it; a walk treats the file as having one), and that group's last report on it
 * ({@code BlockGroup.Held}), shown only to a group asked to book the next window elsewhere, since the policy
 * sizes a window from the one it replaces. A request says what it asks of the window
 * ({@code BlockGroup.WindowAsk}), the answer what became of it ({@code BlockGroup.WindowReport}), never an
 * echo. File servers and groups speak {@link org.blockyard.runtime.alloc.GroupFileProtocol}: the groups'
 * answers have a sealed type of their own, not the hosts' commands, and name the asking server by a typed
 * handle. Every actor's protocol is sealed, and so is what a file server is doing (its {@code Phase}).
 *
 * <h2>Invariants</h2>
 * No block has two owners; no system-zone block is ever handed out; free plus owned equals the data blocks;
 * each group's free count, run index and published figures follow its bitmap; windows never overlap and
 * never leave their group; a file's map never overlaps itself; a refused call changes nothing; one
 * {@code FileState} is never served by two actors. The tests check all of these after random operations
 * ({@code LargeVolumePropertyTest}, and the testkit's {@code PolicyContract} and {@code ExtentContract},
 * run over the built-ins).
 *
 * <h2>Operations</h2>
 * <pre>
 *   open                                 the file's shard (new file: home group)   1 message, O(log groups)
 *   getBlocks (mapped or preallocated)   the file's shard or actor alone           1 message
 *   getBlocks batch                      the same, every request in one message    1 message
 *   getBlocks (allocating)               FileAllocation: goal, GroupWalk           2 messages per group asked
 *   close (last writer)                  preallocation freed, then answered        1 message + 1 to the group
 *   allocate (extents)                   ExtentWalk: whole pieces first, then split 1 ask per group asked
 *   release / truncate                   prepare in every group, then commit       2 asks per group
 *   freeBlocks, fragmentationScore       published counters                        no message
 *   freeExtents                          one ask per group, paged                  1 ask per group
 * </pre>
 * Skipped groups cost an array read, never a message; no walk recurses or chains futures per group.
 *
 * <h2>Concurrency</h2>
 * Each group's state is touched only by its actor, each file's only by the one actor serving it: its shard,
 * or its own actor after a hand-over in which the shard stops touching it (the global-lock baseline runs the
 * same code under one lock instead). A small file costs no actor: spawning and stopping one, with its death
 * watch, cost more than everything else a file of a few blocks does (see the README's cost model). Walks read published figures that may be one message old;
 * the owning actor checks again. A window search longer than a slice continues by messages to itself, and
 * only requests aimed after its provisional window wait. Faults are answered, not propagated: a handler
 * that throws answers with {@code Failed} and the actor recovers in place; closing answers everything in
 * flight with {@code Closed}. Policies switch at message boundaries; a plugin's policy that throws or
 * answers the impossible is retired for the built-in default ({@link org.blockyard.runtime.alloc.GuardedPolicy}).
 *
 * <h2>Tunables ({@code blockyard.alloc} in {@code config/blockyard.conf})</h2>
 * <pre>
 *   policy                       reservation   the built-in default; plugins add more (PolicyRegistry)
 *   search-slice-words           512           bitmap words a window search scans per message (one 32768-block group)
 *   stash-capacity               100000        requests a group may hold back behind provisional windows
 *   prealloc-min-window-blocks   8             window size from which a file preallocates the rest of its window
 *   file-shards                  0             file-shard actors; 0 = two per core
 *   own-actor-after-blocks       4096          a file this large (or with a grown window) gets its own actor at its next open
 *   reservation.*                see ReservationPolicy.FACTORY: mode, first window 8, ext3 cap 1027, extended cap a group
 * </pre>
 */
package org.blockyard.runtime.alloc;
