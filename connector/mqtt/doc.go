// Package mqtt is the 'mqtt' connector: a source that subscribes to topic
// filters and a sink that publishes to a topic, over MQTT 3.1.1 or 5 (the
// packet codec of mochi-mqtt, which speaks both; the client logic, its
// acknowledgements and reconnections are this package's).
//
// Invariants:
//   - The source acknowledges a QoS 1 or 2 message only once the job has
//     made its effect durable: in a job with checkpoints, when the
//     checkpoint whose barrier followed it completes; without, at the
//     next read. Acknowledgements go in the order the messages came, and
//     never on a connection other than the one that brought the message.
//     With a persistent session, the broker sends again what was not
//     acknowledged: at-least-once.
//   - The sink sends its messages in the order written. What the broker
//     has not acknowledged when a connection ends, and everything written
//     while it is down, goes to the store-and-forward buffer (on disk in
//     the job's state directory), which is sent, oldest first, before any
//     newer message. A Flush returns once every message written is
//     acknowledged or synced into the buffer.
package mqtt
