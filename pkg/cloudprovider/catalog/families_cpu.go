package catalog

// cpuFamilies are the general purpose (m), compute (c), memory (r) and
// burstable (t) families. Prices are us-east-1 on-demand Linux list prices
// per vCPU; memory is MiB per vCPU. Sizes whose memory per vCPU breaks the
// family's ratio (t3.micro to t3.medium, c4.8xlarge) are left out so the
// catalog keeps one ratio per family.
func cpuFamilies() []cpuFamily {
	standard := []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "metal"}
	standard6 := []string{"large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "24xlarge", "32xlarge", "metal"}
	graviton3 := []string{"medium", "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "12xlarge", "16xlarge", "metal"}
	burstable := []string{"large", "xlarge", "2xlarge"}
	return []cpuFamily{
		// General purpose.
		{name: "m4", arch: ArchAMD64, spotDiscount: 0.65, usdPerVCPU: 0.05, mibPerVCPU: 4096,
			sizes: []string{"large", "xlarge", "2xlarge", "4xlarge", "10xlarge", "16xlarge"},
			enis:  map[string]eni{"large": {2, 10}, "16xlarge": {8, 30}}},
		{name: "m5", arch: ArchAMD64, spotDiscount: 0.6, usdPerVCPU: 0.048, mibPerVCPU: 4096, metalVCPU: 96, sizes: standard},
		{name: "m6i", arch: ArchAMD64, spotDiscount: 0.55, usdPerVCPU: 0.048, mibPerVCPU: 4096, metalVCPU: 128, sizes: standard6},
		{name: "m7g", arch: ArchARM64, spotDiscount: 0.5, usdPerVCPU: 0.0408, mibPerVCPU: 4096, metalVCPU: 64, sizes: graviton3},

		// Compute optimized. c4 is the previous generation: Xen, 3.75 GiB
		// per 2 vCPUs.
		{name: "c4", arch: ArchAMD64, spotDiscount: 0.65, usdPerVCPU: 0.04975, mibPerVCPU: 1920,
			sizes: []string{"large", "xlarge", "2xlarge", "4xlarge"}},
		{name: "c5", arch: ArchAMD64, spotDiscount: 0.6, usdPerVCPU: 0.0425, mibPerVCPU: 2048, metalVCPU: 96,
			sizes: []string{"large", "xlarge", "2xlarge", "4xlarge", "9xlarge", "12xlarge", "18xlarge", "24xlarge", "metal"}},
		{name: "c6i", arch: ArchAMD64, spotDiscount: 0.55, usdPerVCPU: 0.0425, mibPerVCPU: 2048, metalVCPU: 128, sizes: standard6},
		{name: "c7g", arch: ArchARM64, spotDiscount: 0.5, usdPerVCPU: 0.03625, mibPerVCPU: 2048, metalVCPU: 64, sizes: graviton3},

		// Memory optimized.
		{name: "r5", arch: ArchAMD64, spotDiscount: 0.65, usdPerVCPU: 0.063, mibPerVCPU: 8192, metalVCPU: 96, sizes: standard},
		{name: "r6i", arch: ArchAMD64, spotDiscount: 0.55, usdPerVCPU: 0.063, mibPerVCPU: 8192, metalVCPU: 128, sizes: standard6},

		// Burstable; the unlimited-mode CPU credits are not modelled.
		{name: "t3", arch: ArchAMD64, spotDiscount: 0.65, usdPerVCPU: 0.0416, mibPerVCPU: 4096, sizes: burstable,
			enis: map[string]eni{"large": {3, 12}}},
		{name: "t4g", arch: ArchARM64, spotDiscount: 0.6, usdPerVCPU: 0.0336, mibPerVCPU: 4096, sizes: burstable,
			enis: map[string]eni{"large": {3, 12}}},
	}
}
