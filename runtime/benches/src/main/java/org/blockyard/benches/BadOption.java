package org.blockyard.benches;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Collection;
import java.util.List;

import com.typesafe.config.Config;
import com.typesafe.config.ConfigException;

import org.blockyard.runtime.config.BlockyardConfig;

/**
 * A wrong value given on the command line: the message names the option, the value and what is allowed, in
 * one line ({@code --policy 'foo': allowed are reservation, mballoc, no-reservation, global-lock, group-locks}). The
 * command line prints it alone on standard error and exits with code 2, as picocli does for its own parse
 * errors; a size given to a size option is quoted as the user wrote it ({@code --file-size '16MB'}, not its
 * bytes: the command line puts the written text back, {@link #option()}, {@link #value()}). The checks below
 * are the ones the commands share, output paths among them: a file or directory a command is to write is
 * checked before the command runs, so that a wrong one does not cost the run.
 */
public final class BadOption extends IllegalArgumentException {
    private final String option, allowed;
    private final transient Object value;

    public BadOption(String option, Object value, String allowed) {
        super(option + " '" + value + "': " + allowed);
        this.option = option;
        this.value = value;
        this.allowed = allowed;
    }

    /** The option (or key, or parameter) the message names. */
    public String option() {
        return option;
    }

    /** The value as the check saw it: for a size option, its bytes. */
    public Object value() {
        return value;
    }

    /** What is allowed, the message after the value. */
    public String allowed() {
        return allowed;
    }

    /** The same refusal quoting {@code written}, the value as the user wrote it. */
    public BadOption quoting(String written) {
        BadOption b = new BadOption(option, written, allowed);
        b.setStackTrace(getStackTrace());
        return b;
    }

    /** {@code value} when it lies in {@code [min, max]}. */
    public static long within(String option, long value, long min, long max) {
        if (value < min || value > max) throw new BadOption(option, value, "must be from " + min + " to " + max);
        return value;
    }

    /** {@code value} when it is at least {@code min}. */
    public static long atLeast(String option, long value, long min) {
        if (value < min) throw new BadOption(option, value, "must be at least " + min);
        return value;
    }

    /** {@code value} when it lies in {@code [low, high)}, or {@code [low, high]} with {@code highIncluded}. */
    public static double between(String option, double value, double low, double high, boolean highIncluded) {
        if (!(value >= low && (highIncluded ? value <= high : value < high)))
            throw new BadOption(option, value, "must be from " + low + " to " + high + (highIncluded ? "" : ", exclusive"));
        return value;
    }

    /** {@code value} when it is one of {@code allowed} (compared trimmed). */
    public static String oneOf(String option, String value, Collection<String> allowed) {
        if (value == null || !allowed.contains(value.trim()))
            throw new BadOption(option, value, "allowed are " + String.join(", ", allowed));
        return value.trim();
    }

    /** Every name of a comma-separated option in {@code allowed}; at least one name. */
    public static List<String> allOf(String option, List<String> values, Collection<String> allowed) {
        if (values == null || values.isEmpty()) throw new BadOption(option, "", "allowed are " + String.join(", ", allowed));
        for (String v : values) oneOf(option, v, allowed);
        return values.stream().map(String::trim).toList();
    }

    /**
     * The configuration: the defaults with {@code file} (given as {@code --config}) layered over them. A missing,
     * unreadable or malformed file is a {@code BadOption} naming the file and the first problem in it.
     */
    public static Config config(Path file) {
        try {
            return BlockyardConfig.load(file);
        } catch (ConfigException e) {
            throw new BadOption("--config", file, "not a valid configuration: " + firstLine(e.getMessage()));
        } catch (IllegalArgumentException e) {
            if (file == null) throw e;
            throw new BadOption("--config", file, "must be a readable HOCON file (" + firstLine(e.getMessage()) + ")");
        }
    }

    /**
     * {@code file} when this process can write it: refused (a {@code BadOption} on {@code option}) when it is a
     * directory, when its directory is missing or is not one, or when the file cannot be made or opened for
     * writing there (permission denied, a read-only file system, a pseudo file system such as /sys). A path
     * that is missing is made and removed again to find out, one that exists is opened without being changed:
     * the check leaves nothing behind. Other kinds of file (a pipe, {@code /dev/null}, {@code /dev/stdout})
     * are taken as they are.
     */
    public static Path outputFile(String option, Path file) {
        if (Files.isDirectory(file)) throw new BadOption(option, file, "is a directory; give a file name");
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null && !Files.exists(parent)) throw new BadOption(option, file, "no such directory: " + parent);
        if (parent != null && !Files.isDirectory(parent)) throw new BadOption(option, file, "not a directory: " + parent);
        try {
            if (!Files.exists(file)) {
                Files.createFile(file);
                Files.delete(file);
            } else if (Files.isRegularFile(file)) {
                try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE)) {
                    // opened for writing, not written: the file stays as it is until the command writes it
                }
            }
        } catch (IOException e) {
            throw new BadOption(option, file, "cannot be written: " + reason(e));
        }
        return file;
    }

    /**
     * {@code dir} made ready for files: created with its parents when missing. A path that is a file, or a
     * directory that cannot be made or written in, is a {@code BadOption} on {@code option}.
     */
    public static Path outputDirectory(String option, Path dir) {
        if (Files.exists(dir) && !Files.isDirectory(dir)) throw new BadOption(option, dir, "is a file; give a directory");
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            throw new BadOption(option, dir, "cannot be made a directory: " + reason(e));
        }
        Path probe = dir.resolve(".blockyard-probe-" + ProcessHandle.current().pid());
        try {
            Files.deleteIfExists(Files.createFile(probe));
        } catch (IOException e) {
            throw new BadOption(option, dir, "is a directory files cannot be written in: " + reason(e));
        }
        return dir;
    }

    /**
     * Writes {@code file} through {@code body}. A failure (a full file system) is an IOException naming the file
     * and why, and leaves no part of the file behind.
     */
    public static void write(Path file, IoBody body) throws IOException {
        OutputStream out;
        try {
            out = Files.newOutputStream(file);
        } catch (IOException e) {
            throw failed(file, e);
        }
        try (out) {
            body.write(out);
        } catch (IOException e) {
            try {
                if (Files.isRegularFile(file)) Files.delete(file);
            } catch (IOException cannot) {
                e.addSuppressed(cannot);
            }
            throw failed(file, e);
        }
    }

    /** What {@link #write} writes. */
    @FunctionalInterface
    public interface IoBody {
        void write(OutputStream out) throws IOException;
    }

    /** {@code e} as one IOException saying {@code PATH: why} ({@code out.json: no space left on device}). */
    public static IOException failed(Path file, IOException e) {
        String why = reason(e);
        return new IOException(file + ": " + why, e);
    }

    /**
     * Why an I/O failed, in the words of the system's error messages in lower case ({@code permission denied},
     * {@code no such file or directory}, {@code no space left on device}), without the path the exception carries.
     */
    public static String reason(IOException e) {
        // The system's word is at the bottom: ImageIO's "I/O error writing PNG file!" carries "No space left on device".
        while (e.getCause() instanceof IOException under && under != e) e = under;
        String why;
        if (e instanceof AccessDeniedException) why = "permission denied";
        else if (e instanceof NoSuchFileException) why = "no such file or directory";
        else if (e instanceof NotDirectoryException) why = "not a directory";
        else if (e instanceof FileSystemException f && f.getReason() != null) why = f.getReason();
        else if (e instanceof FileSystemException f) why = f.getClass().getSimpleName();
        else why = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        why = firstLine(why);
        // "No space left on device (errno 28)" and the like: the sentence, not its capital.
        if (why.length() > 1 && Character.isUpperCase(why.charAt(0)) && Character.isLowerCase(why.charAt(1)))
            why = Character.toLowerCase(why.charAt(0)) + why.substring(1);
        return why;
    }

    private static String firstLine(String s) {
        if (s == null) return "";
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }
}
