/** Network value types shared by the kernel maps and the features that fill them (an IPv4 prefix). */
package io.nexuscore.net;
