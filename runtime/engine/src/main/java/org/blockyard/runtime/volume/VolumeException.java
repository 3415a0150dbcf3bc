package org.blockyard.runtime.volume;

/**
 * Why a volume could not be made, opened or read. Nothing was written when one is thrown. Callers switch on
 * the subclass; the message names the image, the structure and the block.
 */
public abstract sealed class VolumeException extends RuntimeException
        permits VolumeException.NotAVolume, VolumeException.NewerFormat, VolumeException.OlderFormat, VolumeException.Truncated,
        VolumeException.Corrupt, VolumeException.NoSuchFile, VolumeException.JournalFailed, VolumeException.InUse,
        VolumeException.WouldOverwrite, VolumeException.JournalDamaged, VolumeException.NotAnImage,
        VolumeException.CannotOpen {

    protected VolumeException(String message, Throwable cause) {
        super(message, cause);
    }

    /** The image does not start with a Blockyard superblock (wrong magic). */
    public static final class NotAVolume extends VolumeException {
        public NotAVolume(String message) { super(message, null); }
    }

    /** The volume was made by a newer format version, or needs a feature this version does not know. */
    public static final class NewerFormat extends VolumeException {
        public NewerFormat(String message) { super(message, null); }
    }

    /** The volume was made in an older format this version does not read; the message says what to do. */
    public static final class OlderFormat extends VolumeException {
        public OlderFormat(String message) { super(message, null); }
    }

    /** The image is shorter than the volume its superblock describes. */
    public static final class Truncated extends VolumeException {
        public Truncated(String message) { super(message, null); }
    }

    /** The metadata structures a checksum or a bound can catch. */
    public enum Structure {
        SUPERBLOCK("superblock"), GROUP_DESCRIPTOR("group descriptor"), BITMAP("block bitmap"),
        FILE_TABLE("file table"), JOURNAL("journal"),
        MMP("multi-mount protection block");

        private final String label;

        Structure(String label) {
            this.label = label;
        }

        @Override
        public String toString() {
            return label;
        }
    }

    /**
     * A metadata block failed its checksum or holds an impossible value; it was not used. {@link #structure()}
     * says what kind of block, {@link #block()} where it is (-1 when it is not one block).
     */
    public static final class Corrupt extends VolumeException {
        private final Structure structure;
        private final long block;

        public Corrupt(Structure structure, long block, String message) {
            super(structure + (block >= 0 ? " at block " + block : "") + ": " + message
                    + " (not trusted; run fsck)", null);
            this.structure = structure;
            this.block = block;
        }

        public Structure structure() {
            return structure;
        }

        public long block() {
            return block;
        }
    }

    /** A file named on the command line or in a call is not in the volume's file table. */
    public static final class NoSuchFile extends VolumeException {
        public NoSuchFile(String message) { super(message, null); }
    }

    /** The journal could not be written; the volume stops acknowledging changes. */
    public static final class JournalFailed extends VolumeException {
        public JournalFailed(String message, Throwable cause) { super(message, cause); }
    }

    /**
     * Another process (or another open in this one) has the volume open. A refusal in this process opens no
     * descriptor of the image, so the holder's lock stays (see {@code ImageLock}).
     */
    public static final class InUse extends VolumeException {
        public InUse(String message) { super(message, null); }
    }

    /**
     * mkfs was asked to make a volume where one already is, or over a file with data in it; nothing was written.
     * mkfs --force ({@code Volume.mkfs(image, layout, true)}) overwrites it.
     */
    public static final class WouldOverwrite extends VolumeException {
        public WouldOverwrite(String message) { super(message, null); }
    }

    /**
     * The journal holds committed transactions that recovery cannot replay: one that is not whole or not in
     * sequence (a flipped byte, a block that is not metadata) with valid transactions after it. Recovery
     * replays none of it and writes nothing: the volume stays as it was, to be looked at read-only
     * ({@code Volume.inspect}, {@code fsck}) until {@code fsck --repair} decides. {@link #skipped()} names the
     * transactions not replayed, {@link #skippedBlocks()} the metadata blocks they log.
     */
    public static final class JournalDamaged extends VolumeException {
        private final java.util.List<Long> skipped;
        private final long skippedBlocks;

        public JournalDamaged(String message, java.util.List<Long> skipped, long skippedBlocks) {
            super(message, null);
            this.skipped = java.util.List.copyOf(skipped);
            this.skippedBlocks = skippedBlocks;
        }

        /** Sequence numbers of the committed transactions recovery did not replay, in order. */
        public java.util.List<Long> skipped() {
            return skipped;
        }

        public long skippedBlocks() {
            return skippedBlocks;
        }
    }

    /**
     * The path names something that cannot hold a volume: a directory, a FIFO, a character device (such as
     * /dev/null) or a socket. Only a regular file or a block device is an image; the path was not opened.
     */
    public static final class NotAnImage extends VolumeException {
        public NotAnImage(String message) { super(message, null); }
    }

    /**
     * The image could not be opened: "cannot open IMAGE: permission denied", a read-only file system, an I/O
     * error. The cause is the {@link java.io.IOException} the open threw.
     */
    public static final class CannotOpen extends VolumeException {
        public CannotOpen(String message, java.io.IOException cause) { super(message, cause); }
    }
}
