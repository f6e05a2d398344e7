// Package sched owns request classification, the master's priority queue and the dispatch policies.
//
// # Policies
//
// A policy is one file: its type, its Select, and an init that calls
// RegisterPolicy with its name, its constructor and its QueueMode (one
// FIFO per class served highest first, or one FIFO for all). Config
// validation, `ews config init` and the benchmarks list PolicyNames, so
// nothing else names it. Per-board state stays in the policy value, by
// Board.ID. Sticky and Proximity wrap whichever policy is configured.
//
// # Seed 000, step by step
//
// The paper's master ("主EWS端") in the words of the seed text (its OCR
// pinyin annotations dropped, one garbled word restored in brackets), each
// step with the code that does it:
//
//  0. The state table "struct State{int linknum[3]; int runstate[3]}" (各EWS的連接數, 各EWS的運行狀態), on
//     every board: the replicated rows are state/election.go:rows (linknum,
//     runstate, one state.Board = row.Board each); the master's own record of them is
//     Board.Linknum and Board.Running, taken in update.go:Update.
//  1. "初始化狀態表,由主EWS完成狀態表的同步" (set up the table; the master
//     keeps it in sync): state/election.go:masterTick broadcasts the table (or its digest)
//     every heartbeat; node/mastership.go:update hands its rows (row.Board,
//     the same type the gossip decoder fills) to update.go:Update.
//  2. "從請求隊列中,按請求到達的先后順序選擇高優先級請求,若無高優先級請求,則按請求到達的先后順序選擇" (take the oldest request of the highest
//     priority, else the oldest of the next): classify.go:Classify gives
//     the class; queue.go:next and queue.go:placeable pick the waiter
//     (PriorityQueues; OneFIFO is the paper's baseline "lc").
//  3. "選取最小linknum=0,1,2值對應的嵌入式Web服務器+并廣播狀態表" (choose the board with
//     the smallest linknum and broadcast the table): round.go:choose asks
//     policy_leastconn.go:LeastConn.Select; round.go:start raises its
//     linknum (update.go:refresh) at once, before any report.
//  4. "接收來自其它EWS的報告包,更新[狀態]表并廣播狀態表" (take the boards' report
//     packets, update the table): a finished request returns its slot in
//     ticket.go:Done -> round.go:finish, which runs the next dispatch
//     round; the boards' own reports of linknum arrive through
//     update.go:Update and update.go:refresh.
//  5. "若主EWS在Tthreshold時間內未收到嵌入式Web服務器=0,1,2的信息,則將runstate的值置為無窮大,不再向其轉發訪問請求" (a board silent for Tthreshold gets runstate
//     infinity and no more requests): state/election.go:alive and rows mark
//     it Down; update.go:Update copies Running = false, and
//     round.go:eligible leaves it out of every pool.
//  6. "若收到runstatei=0(i=0,1,2對應的EWS的信息,則將runstatei的值設為1,linknumi的值置為0" (a board
//     that reports it is back is running again with linknum 0):
//     state/board.go:board turns a Joining report into Running with
//     linknum 0; update.go:Update takes it as the board's new report, to
//     which the master adds only its own dispatches since (update.go:refresh).
//
// Around the paper: admit.go (fail fast instead of waiting out the queue
// timeout, CoDel), acquire.go (the caller's wait, on the injected clock),
// Request.Exclude (a retry's board is chosen by the same selector),
// device.go (a request for a busy device waits in the queue, not in a
// board slot; reads of one device start together).
package sched
