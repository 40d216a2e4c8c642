import LockstepControl

extension OSCAddressSpace {
    /// What one packet asks for, read as ``OSCControlServer`` reads it: a message's request, or
    /// each message of a bundle's in order (nested bundles flattened), each a request or the error
    /// its reply would carry; a packet liblo cannot decode is one error. Pure — bytes in, requests
    /// out, no session or engine — for the fuzzer and the tests that replay its corpus.
    public static func requests(in packet: UnsafeRawBufferPointer) -> [Result<OSCRequest, ControlError>] {
        func answer(_ message: OSCMessage) -> Result<OSCRequest, ControlError> {
            do throws(ControlError) { return .success(try OSCAddressSpace.request(for: message)) } catch { return .failure(error) }
        }
        do throws(OSCError) {
            if OSCMessage.isBundle(packet) { return try OSCBundle(decoding: packet).entries.map { answer($0.message) } }
            return [answer(try OSCMessage(decoding: packet))]
        } catch {
            return [.failure(ControlError(.malformed, error.message))]
        }
    }
}
