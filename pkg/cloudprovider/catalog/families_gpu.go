package catalog

// gpuFamilies are the accelerated families (g graphics and inference, p
// training). Prices are us-east-1 on-demand Linux list prices per hour;
// GPU memory is per GPU, in MiB as EC2 reports it. A larger size is not
// always dearer: g5.16xlarge has more CPU but fewer GPUs than g5.12xlarge
// and costs less.
func gpuFamilies() []gpuFamily {
	return []gpuFamily{
		{name: "g4dn", arch: ArchAMD64, spotDiscount: 0.6, gpuName: "t4", gpuMemoryMiB: 16384, sizes: []gpuSize{
			{name: "xlarge", vcpu: 4, memoryGiB: 16, gpus: 1, usd: 0.526, enis: eni{3, 10}},
			{name: "2xlarge", vcpu: 8, memoryGiB: 32, gpus: 1, usd: 0.752, enis: eni{3, 10}},
			{name: "4xlarge", vcpu: 16, memoryGiB: 64, gpus: 1, usd: 1.204, enis: eni{3, 10}},
			{name: "8xlarge", vcpu: 32, memoryGiB: 128, gpus: 1, usd: 2.176, enis: eni{4, 15}},
			{name: "12xlarge", vcpu: 48, memoryGiB: 192, gpus: 4, usd: 3.912},
			{name: "16xlarge", vcpu: 64, memoryGiB: 256, gpus: 1, usd: 4.352, enis: eni{4, 15}},
			{name: "metal", vcpu: 96, memoryGiB: 384, gpus: 8, usd: 7.824},
		}},
		{name: "g5", arch: ArchAMD64, spotDiscount: 0.55, gpuName: "a10g", gpuMemoryMiB: 24576, sizes: []gpuSize{
			{name: "xlarge", vcpu: 4, memoryGiB: 16, gpus: 1, usd: 1.006},
			{name: "2xlarge", vcpu: 8, memoryGiB: 32, gpus: 1, usd: 1.212},
			{name: "4xlarge", vcpu: 16, memoryGiB: 64, gpus: 1, usd: 1.624},
			{name: "8xlarge", vcpu: 32, memoryGiB: 128, gpus: 1, usd: 2.448},
			{name: "12xlarge", vcpu: 48, memoryGiB: 192, gpus: 4, usd: 5.672, enis: eni{15, 50}},
			{name: "16xlarge", vcpu: 64, memoryGiB: 256, gpus: 1, usd: 4.096, enis: eni{8, 30}},
			{name: "24xlarge", vcpu: 96, memoryGiB: 384, gpus: 4, usd: 8.144},
			{name: "48xlarge", vcpu: 192, memoryGiB: 768, gpus: 8, usd: 16.288, enis: eni{7, 50}},
		}},
		{name: "g5g", arch: ArchARM64, spotDiscount: 0.6, gpuName: "t4g", gpuMemoryMiB: 16384, sizes: []gpuSize{
			{name: "xlarge", vcpu: 4, memoryGiB: 8, gpus: 1, usd: 0.42},
			{name: "2xlarge", vcpu: 8, memoryGiB: 16, gpus: 1, usd: 0.556},
			{name: "4xlarge", vcpu: 16, memoryGiB: 32, gpus: 1, usd: 0.828},
			{name: "8xlarge", vcpu: 32, memoryGiB: 64, gpus: 1, usd: 1.372},
			{name: "16xlarge", vcpu: 64, memoryGiB: 128, gpus: 2, usd: 2.744},
			{name: "metal", vcpu: 64, memoryGiB: 128, gpus: 2, usd: 2.744},
		}},
		{name: "g6", arch: ArchAMD64, spotDiscount: 0.5, gpuName: "l4", gpuMemoryMiB: 22888, sizes: []gpuSize{
			{name: "xlarge", vcpu: 4, memoryGiB: 16, gpus: 1, usd: 0.8048},
			{name: "2xlarge", vcpu: 8, memoryGiB: 32, gpus: 1, usd: 0.9776},
			{name: "4xlarge", vcpu: 16, memoryGiB: 64, gpus: 1, usd: 1.3232},
			{name: "8xlarge", vcpu: 32, memoryGiB: 128, gpus: 1, usd: 2.0144},
			{name: "12xlarge", vcpu: 48, memoryGiB: 192, gpus: 4, usd: 4.6016},
			{name: "16xlarge", vcpu: 64, memoryGiB: 256, gpus: 1, usd: 3.3968},
			{name: "24xlarge", vcpu: 96, memoryGiB: 384, gpus: 4, usd: 6.6752},
			{name: "48xlarge", vcpu: 192, memoryGiB: 768, gpus: 8, usd: 13.3504},
		}},
		{name: "g6e", arch: ArchAMD64, spotDiscount: 0.4, gpuName: "l40s", gpuMemoryMiB: 45776, sizes: []gpuSize{
			{name: "xlarge", vcpu: 4, memoryGiB: 32, gpus: 1, usd: 1.861},
			{name: "2xlarge", vcpu: 8, memoryGiB: 64, gpus: 1, usd: 2.2421},
			{name: "4xlarge", vcpu: 16, memoryGiB: 128, gpus: 1, usd: 3.0042},
			{name: "8xlarge", vcpu: 32, memoryGiB: 256, gpus: 1, usd: 4.5286},
			{name: "12xlarge", vcpu: 48, memoryGiB: 384, gpus: 4, usd: 10.4926, enis: eni{10, 30}},
			{name: "16xlarge", vcpu: 64, memoryGiB: 512, gpus: 1, usd: 7.5772},
			{name: "24xlarge", vcpu: 96, memoryGiB: 768, gpus: 4, usd: 15.0656},
			{name: "48xlarge", vcpu: 192, memoryGiB: 1536, gpus: 8, usd: 30.1312},
		}},
		// The p families come in one size each, eight GPUs with
		// NVSwitch; prices are after AWS's 2025 reduction.
		{name: "p4d", arch: ArchAMD64, spotDiscount: 0.4, gpuName: "a100", gpuMemoryMiB: 40960, sizes: []gpuSize{
			{name: "24xlarge", vcpu: 96, memoryGiB: 1152, gpus: 8, usd: 21.9576},
		}},
		{name: "p4de", arch: ArchAMD64, spotDiscount: 0.35, gpuName: "a100", gpuMemoryMiB: 81920, sizes: []gpuSize{
			{name: "24xlarge", vcpu: 96, memoryGiB: 1152, gpus: 8, usd: 27.4471},
		}},
		{name: "p5", arch: ArchAMD64, spotDiscount: 0.3, gpuName: "h100", gpuMemoryMiB: 81920, sizes: []gpuSize{
			{name: "48xlarge", vcpu: 192, memoryGiB: 2048, gpus: 8, usd: 55.04},
		}},
	}
}
