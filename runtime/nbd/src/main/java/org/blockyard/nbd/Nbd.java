package org.blockyard.nbd;

/**
 * The numbers of the NBD protocol this server speaks (NetworkBlockDevice/nbd {@code doc/proto.md}; the same as
 * nbdkit's {@code nbd-protocol.h}). Every field on the wire is big-endian.
 */
final class Nbd {
    private Nbd() {}

    static final long NBDMAGIC = 0x4e42444d41474943L;
    static final long IHAVEOPT = 0x49484156454F5054L;
    static final long OPT_REPLY_MAGIC = 0x0003e889045565a9L;
    static final int REQUEST_MAGIC = 0x25609513;
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;

    // handshake flags (server) and client flags
    static final int FLAG_FIXED_NEWSTYLE = 0x1;
    static final int FLAG_NO_ZEROES = 0x2;

    // options
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_INFO = 6;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;
    static final int OPT_LIST_META_CONTEXT = 9;
    static final int OPT_SET_META_CONTEXT = 10;

    // option replies
    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_META_CONTEXT = 4;
    static final int REP_ERR_UNSUP = 0x80000001;
    static final int REP_ERR_INVALID = 0x80000003;
    static final int REP_ERR_UNKNOWN = 0x80000006;
    static final int REP_ERR_TOO_BIG = 0x80000009;

    // INFO types
    static final int INFO_EXPORT = 0;
    static final int INFO_NAME = 1;
    static final int INFO_BLOCK_SIZE = 3;

    // transmission flags
    static final int TF_HAS_FLAGS = 0x1;
    static final int TF_SEND_FLUSH = 0x4;
    static final int TF_SEND_FUA = 0x8;
    static final int TF_SEND_TRIM = 0x20;
    static final int TF_SEND_WRITE_ZEROES = 0x40;
    static final int TF_SEND_DF = 0x80;
    static final int TF_CAN_MULTI_CONN = 0x100;

    // commands
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_WRITE_ZEROES = 6;
    static final int CMD_BLOCK_STATUS = 7;

    // command flags
    static final int CMD_FLAG_FUA = 0x1;
    static final int CMD_FLAG_NO_HOLE = 0x2;
    static final int CMD_FLAG_DF = 0x4;
    static final int CMD_FLAG_REQ_ONE = 0x8;

    // structured reply chunks
    static final int REPLY_FLAG_DONE = 0x1;
    static final int REPLY_TYPE_NONE = 0;
    static final int REPLY_TYPE_OFFSET_DATA = 1;
    static final int REPLY_TYPE_BLOCK_STATUS = 5; // not 3, as the reference nbd.h has it
    static final int REPLY_TYPE_ERROR = 32769;

    // base:allocation
    static final String BASE_ALLOCATION = "base:allocation";
    static final int META_CONTEXT_ID = 1;
    static final int STATE_HOLE = 0x1;
    static final int STATE_ZERO = 0x2;

    // errors
    static final int EPERM = 1;
    static final int EIO = 5;
    static final int ENOMEM = 12;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EOVERFLOW = 75;
    static final int ESHUTDOWN = 108;
}
