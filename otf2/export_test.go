package otf2

// OldArchive writes the hand-encoded archive of OTF2 1.0 to 2.3 record
// layouts (encode_test.go) for the external tests.
var OldArchive = oldArchive
