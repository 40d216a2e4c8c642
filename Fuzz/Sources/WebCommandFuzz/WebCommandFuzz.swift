import FuzzSupport
import LockstepControl

/// One input: a message on the web page's WebSocket (or a `POST /api/command` body), parsed as
/// the server parses it (`WebCommand.parse`, JSON to a command): an error that says something, or
/// a command in range (FuzzSupport.checkCommand). A trap or a hang is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func webCommandFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let text = String(decoding: UnsafeBufferPointer(start: data, count: data == nil ? 0 : size), as: UTF8.self)
    do throws(ControlError) {
        let (command, address) = try WebCommand.parse(text)
        precondition(ControlLine.verbs.contains(address), "an address that is no verb: \(address)")
        checkCommand(command, address: address)
    } catch {
        checkRefusal(error)
    }
    return 0
}
