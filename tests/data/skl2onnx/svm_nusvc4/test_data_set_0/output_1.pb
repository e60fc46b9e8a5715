BprobabilitiesJ°íÉQ@rc@xQA?@ˆ¾J°w?$O@}@>ˆ‡¾J›’¾îÄR?†Á@FaQ@IïN@T¶@LJ?A›g¾}
Ž¾óæp?Q’@v1O@ß-W?3¹ý?èO@„ëa¾#ae?ÇO@<ü?™tm¾Å¤ü?oªO@ò?ý=¾… @€ìP@j˜v?7IŠ¾Iô„¾þ@ ùL@?³‚?žåŽ¾Ea?”Œ@
Q@