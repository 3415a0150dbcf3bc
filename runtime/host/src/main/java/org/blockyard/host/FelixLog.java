package org.blockyard.host;

import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The framework's own messages (resolution failures, bundle errors) through SLF4J, like the engine's. */
final class FelixLog extends org.apache.felix.framework.Logger {
    private static final Logger LOG = LoggerFactory.getLogger("org.apache.felix.framework");

    @Override
    protected void doLog(Bundle bundle, ServiceReference sr, int level, String msg, Throwable throwable) {
        String text = bundle != null ? bundle.getSymbolicName() + " [" + bundle.getBundleId() + "]: " + msg : msg;
        switch (level) {
            case LOG_ERROR -> LOG.error(text, throwable);
            case LOG_WARNING -> LOG.warn(text, throwable);
            case LOG_INFO -> LOG.info(text, throwable);
            default -> LOG.debug(text, throwable);
        }
    }

    @Override
    protected void doLog(int level, String msg, Throwable throwable) {
        doLog(null, null, level, msg, throwable);
    }
}
