package org.blockyard.runtime.volume;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

import com.sun.nio.file.ExtendedOpenOption;

/**
 * The images this process holds, each with its one channel and the lock on it against other processes.
 *
 * <p>Why a registry, and not only {@link FileChannel#tryLock}: that lock is a POSIX record lock (fcntl), and
 * such a lock belongs to the process and the file, not to the descriptor that took it. Closing ANY descriptor
 * of the file in this process drops every lock the process holds on it (POSIX says so and Linux does it). A
 * second open of an image in this process that opens a channel, finds the image locked and closes its
 * channel again has therefore unlocked the first: another process's {@code fsck --repair} could then run on
 * a live volume. The JVM refuses a second lock from another channel (OverlappingFileLockException), but only
 * once that channel is open, and closing it is what does the harm. Nor may a volume's block device open a
 * descriptor of its own and close it before the volume's last write.
 *
 * <p>So every entry that opens an image (mkfs, {@code Volume.open}, {@code Volume.inspect},
 * {@code Volume.journalTransactions}, {@code Fsck.check}) comes here first, and everything below runs under
 * one lock: the kind of file is checked (a regular file or a block device; opening a FIFO would block), the
 * image is named by its identity (device and inode from stat, which opens no descriptor; its real path
 * where the file system has no such key), and an image this process holds is refused with
 * {@link VolumeException.InUse} before any descriptor of it is opened. Otherwise the first holder opens the
 * one channel of the image and takes the fcntl lock on it: exclusive for a volume, mkfs or a repair (read
 * and write), shared for a read-only look (read only). Further read-only looks in this process share that
 * channel and its lock; none is let in while the image is held exclusively, and no exclusive holder while
 * any look runs. The channel closes, and with it the lock, when the last holder {@link #close()}s, which a
 * volume does only after the last write and force of its close.
 *
 * <p>What this cannot stop: code of this process that opens the image by other means (a
 * {@code Files.readAllBytes}, a {@code RandomAccessFile}) and closes it drops the lock just the same. Nothing in
 * Blockyard does that with an image it holds.
 */
final class ImageLock implements AutoCloseable {

    /** Guards {@link #HELD}, and every open and close of a held image's channel. */
    private static final Object LOCK = new Object();
    /** Images held in this process, by identity. */
    private static final Map<Object, Held> HELD = new HashMap<>();

    /** One held image: its channel, its fcntl lock, how many hold it (one when exclusive). */
    private static final class Held {
        final Object key;
        final FileChannel channel;
        final boolean shared;
        int holders = 1;
        /** The last holder is closing the channel: the image is still held (its descriptor open) until it is gone. */
        boolean closing;
        /** A second descriptor with O_DIRECT, opened on first need, closed just before {@link #channel}. */
        FileChannel direct;
        boolean directTried;

        Held(Object key, FileChannel channel, boolean shared) {
            this.key = key;
            this.channel = channel;
            this.shared = shared;
        }
    }

    private final Held held;
    private final Path image;
    private boolean released;

    private ImageLock(Held held, Path image) {
        this.held = held;
        this.image = image;
    }

    /**
     * Holds {@code image} alone, read and write (a volume, mkfs, a repair); with {@code create}, a file that does
     * not exist yet is made, empty.
     *
     * @throws VolumeException.InUse when this or another process holds the image
     * @throws VolumeException.NotAnImage when it is a directory, a FIFO, a character device or a socket
     * @throws VolumeException.CannotOpen when it cannot be opened (permission denied, ...)
     * @throws IllegalArgumentException when it does not exist (and is not to be created)
     */
    static ImageLock exclusive(Path image, boolean create) {
        if (create && !Files.exists(image)) {
            try {
                Files.createFile(image); // a new inode: no lock of this process is on it, so closing this one drops none
            } catch (FileAlreadyExistsException raced) {
                // made meanwhile: taken as it is, as a file that was there
            } catch (IOException e) {
                throw cannotOpen(image, e);
            }
        }
        return hold(image, false);
    }

    /** Holds {@code image} for a read-only look, beside other looks of this process; as {@link #exclusive}. */
    static ImageLock shared(Path image) {
        return hold(image, true);
    }

    private static ImageLock hold(Path image, boolean shared) {
        synchronized (LOCK) {
            checkKind(image);
            Object key = identity(image);
            Held h = HELD.get(key);
            if (h != null) {
                if (!(shared && h.shared) || h.closing) throw inUse(image, "this process");
                h.holders++;
                return new ImageLock(h, image);
            }
            FileChannel ch;
            try {
                ch = shared ? FileChannel.open(image, StandardOpenOption.READ)
                        : FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE);
            } catch (IOException e) {
                throw cannotOpen(image, e);
            }
            boolean locked = false;
            try {
                FileLock l;
                try {
                    l = ch.tryLock(0, Long.MAX_VALUE, shared);
                } catch (OverlappingFileLockException e) {
                    // a lock of this JVM that is not in the registry: code that locked the image by itself
                    l = null;
                }
                if (l == null) throw inUse(image, "another process");
                locked = true;
            } catch (IOException e) {
                throw cannotOpen(image, e);
            } finally {
                if (!locked) closeQuietly(ch); // nobody in this process held the image: this close drops no one's lock
            }
            h = new Held(key, shared ? ch : WriteLog.wrap(image, ch), shared);
            HELD.put(key, h);
            return new ImageLock(h, image);
        }
    }

    /** The image's channel: read and write when exclusive, read only when shared. Never to be closed by its user. */
    FileChannel channel() {
        return held.channel;
    }

    Path image() {
        return image;
    }

    /**
     * A descriptor of the image opened with {@code O_DIRECT} (read and write when exclusive), for reads that must
     * see what another host wrote rather than this host's page cache (the multi-mount protection block); null
     * where the file system refuses {@code O_DIRECT} (tmpfs). Opened once per hold and closed with the hold,
     * just before its channel: closing it earlier would drop this process's lock. Never to be closed by its user.
     */
    FileChannel direct() {
        synchronized (LOCK) {
            if (!held.directTried) {
                held.directTried = true;
                try {
                    held.direct = held.shared
                            ? FileChannel.open(image, StandardOpenOption.READ, ExtendedOpenOption.DIRECT)
                            : FileChannel.open(image, StandardOpenOption.READ, StandardOpenOption.WRITE,
                            ExtendedOpenOption.DIRECT);
                } catch (UnsupportedOperationException | IOException e) {
                    held.direct = null;
                }
            }
            return held.direct;
        }
    }

    /**
     * Gives the hold back; the last holder's closes the channel and so drops the lock. Once only; later calls do
     * nothing. The entry goes only once the channel is closed: no new holder can open a channel of the image and
     * lock it while this close is still to come, and have its lock dropped by it. The close itself runs outside
     * the registry's lock, since it waits for any thread still inside an I/O on the channel (a request stuck
     * in a hung disk's fdatasync): the image stays held until then, and every other image can be opened.
     */
    @Override
    public void close() {
        synchronized (LOCK) {
            if (released) return;
            released = true;
            if (--held.holders > 0) return;
            held.closing = true;
        }
        try {
            if (held.direct != null) closeQuietly(held.direct);
            closeQuietly(held.channel);
        } finally {
            synchronized (LOCK) {
                HELD.remove(held.key);
            }
        }
    }

    /** Whether this process holds {@code image} (tests). */
    static boolean held(Path image) {
        synchronized (LOCK) {
            try {
                return HELD.containsKey(identity(image));
            } catch (RuntimeException e) {
                return false;
            }
        }
    }

    // ---- the kind of file -----------------------------------------------------------------------------

    private static final int S_IFMT = 0170000, S_IFSOCK = 0140000, S_IFLNK = 0120000, S_IFREG = 0100000,
            S_IFBLK = 0060000, S_IFDIR = 0040000, S_IFCHR = 0020000, S_IFIFO = 0010000;

    /**
     * Refuses, without opening it, what cannot hold a volume: only a regular file or a block device can (a FIFO
     * would block the open; a directory, a character device such as /dev/null or a socket hold no blocks).
     */
    static void checkKind(Path image) {
        int mode;
        try {
            mode = (Integer) Files.getAttribute(image, "unix:mode");
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("no such image: " + image);
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            // no unix view of this file system: what the basic attributes tell
            BasicFileAttributes a;
            try {
                a = Files.readAttributes(image, BasicFileAttributes.class);
            } catch (NoSuchFileException missing) {
                throw new IllegalArgumentException("no such image: " + image);
            } catch (IOException io) {
                throw cannotOpen(image, io);
            }
            if (a.isDirectory()) throw notAnImage(image, "a directory");
            return;
        } catch (IOException e) {
            throw cannotOpen(image, e);
        }
        String what = switch (mode & S_IFMT) {
            case S_IFREG, S_IFBLK -> null;
            case S_IFIFO -> "a FIFO";
            case S_IFCHR -> "a character device";
            case S_IFDIR -> "a directory";
            case S_IFSOCK -> "a socket";
            case S_IFLNK -> "a symbolic link";
            default -> "not a regular file (mode " + Integer.toOctalString(mode) + ")";
        };
        if (what != null) throw notAnImage(image, what);
    }

    private static VolumeException.NotAnImage notAnImage(Path image, String what) {
        return new VolumeException.NotAnImage(image + " is " + what + ", not a volume image (a file or a block device)");
    }

    /** The file's identity: device and inode where the file system gives them, else its real path. */
    private static Object identity(Path image) {
        try {
            Object key = Files.readAttributes(image, BasicFileAttributes.class).fileKey();
            return key != null ? key : image.toRealPath();
        } catch (NoSuchFileException e) {
            throw new IllegalArgumentException("no such image: " + image);
        } catch (IOException e) {
            throw cannotOpen(image, e);
        }
    }

    private static VolumeException.InUse inUse(Path image, String who) {
        return new VolumeException.InUse(image + " is open (locked by " + who + "); close it first");
    }

    /** "cannot open IMAGE: permission denied", and the like, from what opening it threw. */
    static VolumeException.CannotOpen cannotOpen(Path image, IOException e) {
        String why;
        if (e instanceof AccessDeniedException) why = "permission denied";
        else if (e instanceof NoSuchFileException) why = "no such file or directory";
        else if (e instanceof FileSystemException f && f.getReason() != null) why = f.getReason();
        else why = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        if (why.length() > 1 && Character.isUpperCase(why.charAt(0)) && Character.isLowerCase(why.charAt(1)))
            why = why.substring(0, 1).toLowerCase(Locale.ROOT) + why.substring(1); // "Read-only file system"
        return new VolumeException.CannotOpen("cannot open " + image + ": " + why, e);
    }

    private static void closeQuietly(FileChannel ch) {
        try {
            ch.close();
        } catch (IOException ignored) {
            // nothing was written through it that a close could lose
        }
    }
}
