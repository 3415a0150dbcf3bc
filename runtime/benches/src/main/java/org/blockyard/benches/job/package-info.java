/**
 * {@code blockyard bench run}: workloads defined in a file, in fio's vocabulary (docs/jobs.md).
 *
 * <p><b>Data.</b> A {@link org.blockyard.benches.job.Workload} is the run's settings (device, elevators,
 * volume, seed) and its jobs ({@link org.blockyard.benches.job.JobSpec}, every key resolved: a
 * {@code --KEY=VALUE} option, else the job's own, else the file's {@code global}, else the default). A job has
 * {@code numjobs} clones; each clone counts into its own {@link org.blockyard.benches.job.JobStats}.
 *
 * <p><b>Invariants.</b> Every key of a job file is known (a typo is an error, never a default); every option is
 * checked, whether or not a job uses it; a message quotes a value as it was written; everything the
 * queue, the device or the allocator would refuse is refused before anything starts; a clone only sends the
 * messages a user's code sends ({@code QueueActor.Submit}, {@code FileShard.Open}, {@code FileActor.GetBlocks},
 * {@code Truncate}, {@code Close}, {@code allocate}, {@code release}); figures are counted from the answers, after
 * the ramp.
 *
 * <table>
 * <caption>The clones</caption>
 * <tr><th>ioengine</th><th>clone</th><th>clock</th></tr>
 * <tr><td>queue, on mem or file</td><td>{@link org.blockyard.benches.job.IoClient} over an {@link org.blockyard.benches.job.IoLoad}</td><td>real</td></tr>
 * <tr><td>queue, on sim</td><td>{@link org.blockyard.benches.job.SimClients} over an {@code IoLoad}</td><td>virtual</td></tr>
 * <tr><td>files</td><td>{@link org.blockyard.benches.job.FilesClient}, appending through a {@code LoadClient} child</td><td>real</td></tr>
 * <tr><td>extents</td><td>{@link org.blockyard.benches.job.ExtentsClient}</td><td>real</td></tr>
 * </table>
 *
 * <p><b>Concurrency.</b> A clone's measured figures are written by the clone alone and read once it is done; the
 * status line reads only its atomic counters. Groups (one per elevator) run one after the other, each on a
 * fresh device, queue and volume.
 */
package org.blockyard.benches.job;
