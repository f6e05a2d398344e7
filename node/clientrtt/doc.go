// Package clientrtt measures a board's round trip to its clients from the kernel's TCP_INFO on the connections it accepts (003's scheme 3) and publishes its nearest client networks.
package clientrtt
