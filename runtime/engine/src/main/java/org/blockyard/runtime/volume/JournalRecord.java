package org.blockyard.runtime.volume;

import java.util.List;

import org.blockyard.api.alloc.Extent;
import org.blockyard.runtime.alloc.FileState;

/**
 * What groups, files and the volume append to the journal: one change each, applied to {@link Metadata} by
 * the commit thread in append order. A commit takes a prefix of that order, so it never holds an effect
 * without its cause (a file's map naming a block whose claim came after it).
 */
sealed interface JournalRecord {
    void applyTo(Metadata m);

    record Bitmap(int group, long start, int blocks, boolean used) implements JournalRecord {
        public void applyTo(Metadata m) {
            m.bitmapChanged(group, start, blocks, used);
        }
    }

    record File(long id, FileState.Change change, long logical, long physical, long blocks) implements JournalRecord {
        public void applyTo(Metadata m) {
            m.fileChanged(id, change, logical, physical, blocks);
        }
    }

    record Create(long id, int kind, String name) implements JournalRecord {
        public void applyTo(Metadata m) {
            m.created(id, kind, name);
        }
    }

    /** A file deleted: closed, its blocks freed by the records before this one. */
    record Delete(long id) implements JournalRecord {
        public void applyTo(Metadata m) {
            m.deleted(id);
        }
    }

    record Owner(long id, List<Extent> extents, boolean add) implements JournalRecord {
        public void applyTo(Metadata m) {
            m.ownerChanged(id, extents, add);
        }
    }
}
