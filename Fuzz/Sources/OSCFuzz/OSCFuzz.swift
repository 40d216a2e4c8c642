import FuzzSupport
import LockstepControl
import LockstepOSC

/// One input: a UDP datagram (or a SLIP frame's packet) to Lockstep's OSC surface — liblo's
/// message or bundle decoder, then QLab's address space and its argument conversion
/// (`OSCAddressSpace.requests(in:)`, as `OSCControlServer` reads a packet) — each message an
/// error or a request whose command is in range (FuzzSupport.checkCommand). A trap, a hang, a
/// leak or memory out of bounds is a finding.
@_cdecl("LLVMFuzzerTestOneInput")
public func oscFuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let packet = UnsafeRawBufferPointer(start: data, count: data == nil ? 0 : size)
    for result in OSCAddressSpace.requests(in: packet) {
        switch result {
        case .failure(let error): checkRefusal(error)
        case .success(.command(let command)): checkCommand(command, address: "osc")
        case .success(.cueCommand(_, .level(let decibels))): precondition(!decibels.isNaN && decibels <= 12)
        case .success: break
        }
    }
    return 0
}
